"""Webhook backoff: an endpoint failing fast in the first minute of its failure streak is held
until ``backoff_until``, then tried one attempt at a time (webhooks/health.py)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0011"
down_revision = "0010"


def upgrade() -> None:
    with op.batch_alter_table("webhook_endpoints") as table:
        table.add_column(sa.Column("backoff_until", UtcDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhook_endpoints") as table:
        table.drop_column("backoff_until")
