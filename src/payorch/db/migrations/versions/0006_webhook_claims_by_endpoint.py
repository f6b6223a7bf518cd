"""Webhook claims by endpoint: an endpoint's oldest due delivery in one index probe, so a claim
that shares the worker between applications and endpoints never walks a backlog row by row.
"""

from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_index(
        "ix_webhook_deliveries_endpoint_id_status_next_attempt_at",
        "webhook_deliveries",
        ["endpoint_id", "status", "next_attempt_at"],
    )


def downgrade() -> None:
    op.drop_index(
        "ix_webhook_deliveries_endpoint_id_status_next_attempt_at", table_name="webhook_deliveries"
    )
