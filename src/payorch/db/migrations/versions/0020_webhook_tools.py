"""Webhook tools (docs/webhooks.md): an endpoint's previous secret, kept encrypted and still
signing until it expires (secret rotation with an overlap window), and why an attempt failed in
words (``failure_reason``: dns_error, connection_refused, timeout, tls_error, http_status, ...;
``failure_message``: a short sentence) on each attempt and on its delivery's last one."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0020"
down_revision = "0019"


def upgrade() -> None:
    # Nullable columns: added in place on both databases (no table rebuild on SQLite).
    op.add_column("webhook_endpoints", sa.Column("previous_secret_encrypted", sa.Text, nullable=True))
    op.add_column("webhook_endpoints", sa.Column("previous_secret_expires_at", UtcDateTime, nullable=True))
    for table in ("webhook_deliveries", "webhook_delivery_attempts"):
        op.add_column(table, sa.Column("failure_reason", sa.String(32), nullable=True))
        op.add_column(table, sa.Column("failure_message", sa.String(300), nullable=True))


def downgrade() -> None:
    for table in ("webhook_delivery_attempts", "webhook_deliveries"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("failure_message")
            batch.drop_column("failure_reason")
    with op.batch_alter_table("webhook_endpoints") as batch:
        batch.drop_column("previous_secret_expires_at")
        batch.drop_column("previous_secret_encrypted")
