"""Webhook reliability: an endpoint's failure streak (since when every attempt failed, how many)
and why and since when it was disabled; ordered delivery per endpoint; events without a payment intent
(``webhook_endpoint.disabled``); the attempts in flight of an endpoint by every worker (the
per-endpoint cap shared across worker processes).
"""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    with op.batch_alter_table("webhook_endpoints") as table:
        table.add_column(sa.Column("ordered", sa.Boolean(), nullable=False, server_default="0"))
        table.add_column(sa.Column("failing_since", UtcDateTime(), nullable=True))
        table.add_column(
            sa.Column("failed_attempts", sa.Integer(), nullable=False, server_default="0")
        )
        table.add_column(sa.Column("breaker_until", UtcDateTime(), nullable=True))
        table.add_column(sa.Column("disabled_reason", sa.String(32), nullable=True))
        table.add_column(sa.Column("disabled_at", UtcDateTime(), nullable=True))
    with op.batch_alter_table("events") as table:
        table.alter_column("payment_intent_id", existing_type=sa.String(40), nullable=True)
    op.create_index(
        "ix_webhook_deliveries_endpoint_id_leased_until",
        "webhook_deliveries",
        ["endpoint_id", "leased_until"],
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_endpoint_id_leased_until", table_name="webhook_deliveries")
    with op.batch_alter_table("events") as table:
        table.alter_column("payment_intent_id", existing_type=sa.String(40), nullable=False)
    with op.batch_alter_table("webhook_endpoints") as table:
        for column in (
            "disabled_at",
            "disabled_reason",
            "failed_attempts",
            "breaker_until",
            "failing_since",
            "ordered",
        ):
            table.drop_column(column)
