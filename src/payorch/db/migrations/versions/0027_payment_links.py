"""Payment links (issue 40): the payment_links table, and the link that made an intent
(payment_intents.payment_link_id, null for the API's intents)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0027"
down_revision = "0026"


def upgrade() -> None:
    op.create_table(
        "payment_links",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column(
            "merchant_account_id", sa.String(40), sa.ForeignKey("merchant_accounts.id"), nullable=False
        ),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("description", sa.String(255), nullable=False),
        sa.Column("external_reference", sa.String(64), nullable=True),
        sa.Column("expires_at", UtcDateTime, nullable=True),
        sa.Column("max_payments", sa.Integer, nullable=False),
        sa.Column("after_payment_url", sa.Text, nullable=True),
        sa.Column("metadata", JsonType, nullable=False),
        sa.Column("buyer_message", sa.String(500), nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_payment_links_application_id_id", "payment_links", ["application_id", "id"])
    op.create_index(
        "ix_payment_links_application_id_status_id", "payment_links", ["application_id", "status", "id"]
    )
    op.create_index("ix_payment_links_status_expires_at", "payment_links", ["status", "expires_at"])
    with op.batch_alter_table("payment_intents") as batch:
        batch.add_column(sa.Column("payment_link_id", sa.String(40), nullable=True))
    op.create_index("ix_payment_intents_payment_link_id", "payment_intents", ["payment_link_id"])


def downgrade() -> None:
    op.drop_index("ix_payment_intents_payment_link_id", "payment_intents")
    with op.batch_alter_table("payment_intents") as batch:
        batch.drop_column("payment_link_id")
    op.drop_table("payment_links")
