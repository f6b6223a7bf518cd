"""Disputes (issue 15): a chargeback or mediation recorded on the payment, and the index that
finds a payment by the provider's reference (provider notifications name it)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.add_column("payments", sa.Column("dispute_status", sa.String(8), nullable=True))
    op.add_column("payments", sa.Column("dispute_kind", sa.String(16), nullable=True))
    op.add_column("payments", sa.Column("disputed_at", UtcDateTime, nullable=True))
    op.add_column("payments", sa.Column("dispute_closed_at", UtcDateTime, nullable=True))
    op.create_index(
        "ix_payments_provider_provider_reference", "payments", ["provider", "provider_reference"]
    )


def downgrade() -> None:
    op.drop_index("ix_payments_provider_provider_reference", "payments")
    with op.batch_alter_table("payments") as batch:
        for column in ("dispute_closed_at", "disputed_at", "dispute_kind", "dispute_status"):
            batch.drop_column(column)
