"""The in-flight index of webhook deliveries holds leased rows only (partial): a delivery's
creation and the record of its result write rows without a lease, and no longer pay for an entry
that the shared per-endpoint cap (webhooks/queue.py lock_endpoints) never reads."""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"

NAME = "ix_webhook_deliveries_endpoint_id_leased_until"
LEASED = sa.text("lease_token IS NOT NULL")


def upgrade() -> None:
    op.drop_index(NAME, table_name="webhook_deliveries")
    op.create_index(
        NAME,
        "webhook_deliveries",
        ["endpoint_id", "leased_until"],
        postgresql_where=LEASED,
        sqlite_where=LEASED,
    )


def downgrade() -> None:
    op.drop_index(NAME, table_name="webhook_deliveries")
    op.create_index(NAME, "webhook_deliveries", ["endpoint_id", "leased_until"])
