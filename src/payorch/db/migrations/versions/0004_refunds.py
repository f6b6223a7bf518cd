"""Refunds (issue: refunds). The payments listing indexes came with the payments table (0002)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "refunds",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column(
            "application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False
        ),
        sa.Column("payment_id", sa.String(40), sa.ForeignKey("payments.id"), nullable=False),
        sa.Column("payment_intent_id", sa.String(40), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("reason", sa.String(255), nullable=True),
        sa.Column("failure_reason", sa.String(255), nullable=True),
        sa.Column("provider_refund_id", sa.String(128), nullable=True),
        sa.Column("idempotency_key", sa.String(255), nullable=True),
        sa.Column("next_check_at", UtcDateTime, nullable=True),
        sa.Column("checks", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_refunds_payment_id_id", "refunds", ["payment_id", "id"])
    op.create_index("ix_refunds_status_next_check_at", "refunds", ["status", "next_check_at"])
    op.create_index(
        "uq_refunds_payment_id_idempotency_key",
        "refunds",
        ["payment_id", "idempotency_key"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_table("refunds")
