"""Routing rules per merchant account, versioned (payorch.db.tables.routing.routing_versions),
and the routing record of an intent's latest checkout (payment_intents.routing)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0017"
down_revision = "0016"

ACTIVE = sa.text("active")


def upgrade() -> None:
    op.create_table(
        "routing_versions",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column(
            "merchant_account_id", sa.String(40), sa.ForeignKey("merchant_accounts.id"), nullable=False
        ),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("program", JsonType, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("activated_at", UtcDateTime, nullable=True),
        sa.UniqueConstraint("merchant_account_id", "version"),
    )
    op.create_index(
        "ix_routing_versions_merchant_account_id_active",
        "routing_versions",
        ["merchant_account_id"],
        unique=True,
        postgresql_where=ACTIVE,
        sqlite_where=ACTIVE,
    )
    op.add_column("payment_intents", sa.Column("routing", JsonType, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("payment_intents") as batch:
        batch.drop_column("routing")
    op.drop_table("routing_versions")
