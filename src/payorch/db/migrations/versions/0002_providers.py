"""Payments; connectors, checkouts (issue: providers).

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


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


def downgrade() -> None:
    op.drop_table("payments")
