"""Payments; connectors, checkouts (issue: providers)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "payments",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column(
            "payment_intent_id",
            sa.String(40),
            sa.ForeignKey("payment_intents.id"),
            nullable=False,
            unique=True,
        ),
        sa.Column(
            "merchant_account_id", sa.String(40), sa.ForeignKey("merchant_accounts.id"), nullable=False
        ),
        sa.Column("external_reference", sa.String(64), nullable=False),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("refunded_amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("provider_reference", sa.String(128), nullable=False),
        sa.Column("authorization_code", sa.String(64), nullable=True),
        sa.Column("authorized_at", UtcDateTime, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_payments_application_id_id", "payments", ["application_id", "id"])
    op.create_index(
        "ix_payments_application_id_status_id", "payments", ["application_id", "status", "id"]
    )
    op.create_table(
        "connectors",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column(
            "merchant_account_id", sa.String(40), sa.ForeignKey("merchant_accounts.id"), nullable=False
        ),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("credentials", sa.Text, nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
        sa.UniqueConstraint(
            "merchant_account_id", "provider", name="uq_connectors_merchant_account_id_provider"
        ),
    )
    op.create_table(
        "checkouts",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column(
            "payment_intent_id", sa.String(40), sa.ForeignKey("payment_intents.id"), nullable=False
        ),
        sa.Column("connector_id", sa.String(40), sa.ForeignKey("connectors.id"), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reference", sa.String(128), nullable=False),
        sa.Column("payment_reference", sa.String(128), nullable=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("method", sa.String(8), nullable=False),
        sa.Column("fields", JsonType, nullable=False),
        sa.Column("provider_data", JsonType, nullable=False),
        sa.Column("expires_at", UtcDateTime, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("closed_at", UtcDateTime, nullable=True),
        sa.Column("next_check_at", UtcDateTime, nullable=True),
        sa.Column("check_attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("lease_until", UtcDateTime, nullable=True),
    )
    op.create_index(
        "ix_checkouts_payment_intent_id_created_at", "checkouts", ["payment_intent_id", "created_at"]
    )
    op.create_index("ix_checkouts_reference", "checkouts", ["reference"])
    op.create_index("ix_checkouts_status_next_check_at", "checkouts", ["status", "next_check_at"])


def downgrade() -> None:
    op.drop_table("checkouts")
    op.drop_table("connectors")
    op.drop_table("payments")
