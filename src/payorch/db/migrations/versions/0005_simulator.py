"""Simulator state: the sandbox providers' transactions, preferences, payments, faults.

(issue: providers/simulator)
"""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "simulator_faults",
        sa.Column("owner", sa.String(40), primary_key=True),
        sa.Column("provider", sa.String(40), primary_key=True),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )
    op.create_table(
        "simulator_a_transactions",
        sa.Column("token", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("buy_order", sa.String(26), nullable=False),
        sa.Column("session_id", sa.String(61), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("return_url", sa.String(255), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("outcome", sa.String(8), nullable=True),
        sa.Column("decided_at", UtcDateTime, nullable=True),
        sa.Column("committed_at", UtcDateTime, nullable=True),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("response_code", sa.Integer, nullable=True),
        sa.Column("authorization_code", sa.String(6), nullable=True),
        sa.Column("card_number", sa.String(4), nullable=True),
        sa.Column("payment_type_code", sa.String(2), nullable=True),
        sa.Column("nullified_amount", sa.BigInteger, nullable=False),
    )
    op.create_index(
        "ix_simulator_a_transactions_owner_created_at",
        "simulator_a_transactions",
        ["owner", "created_at"],
    )
    op.create_table(
        "simulator_b_preferences",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("external_reference", sa.String(256), nullable=True),
        sa.Column("currency_id", sa.String(3), nullable=False),
        sa.Column("amount_hundredths", sa.BigInteger, nullable=False),
        sa.Column("expires", sa.Boolean, nullable=False),
        sa.Column("expiration_date_from", UtcDateTime, nullable=True),
        sa.Column("expiration_date_to", UtcDateTime, nullable=True),
        sa.Column("body", JsonType, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_simulator_b_preferences_owner_external_reference",
        "simulator_b_preferences",
        ["owner", "external_reference"],
    )
    op.create_table(
        "simulator_b_payments",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("preference_id", sa.String(80), nullable=False),
        sa.Column("collector_id", sa.BigInteger, nullable=False),
        sa.Column("merchant_order_id", sa.BigInteger, nullable=False),
        sa.Column("external_reference", sa.String(256), nullable=True),
        sa.Column("description", sa.String(256), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_detail", sa.String(40), nullable=False),
        sa.Column("payment_type_id", sa.String(24), nullable=False),
        sa.Column("payment_method_id", sa.String(24), nullable=False),
        sa.Column("currency_id", sa.String(3), nullable=False),
        sa.Column("amount_hundredths", sa.BigInteger, nullable=False),
        sa.Column("refunded_hundredths", sa.BigInteger, nullable=False),
        sa.Column("authorization_code", sa.String(16), nullable=True),
        sa.Column("notification_url", sa.Text, nullable=True),
        sa.Column("date_created", UtcDateTime, nullable=False),
        sa.Column("date_approved", UtcDateTime, nullable=True),
        sa.Column("date_last_updated", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_simulator_b_payments_owner_external_reference",
        "simulator_b_payments",
        ["owner", "external_reference"],
    )
    op.create_index(
        "ix_simulator_b_payments_preference_id", "simulator_b_payments", ["preference_id"]
    )
    op.create_table(
        "simulator_b_refunds",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("payment_id", sa.BigInteger, nullable=False),
        sa.Column("amount_hundredths", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("idempotency_key", sa.String(255), nullable=True),
        sa.Column("date_created", UtcDateTime, nullable=False),
        sa.UniqueConstraint("owner", "idempotency_key", name="uq_simulator_b_refunds_owner_key"),
    )
    op.create_index("ix_simulator_b_refunds_payment_id", "simulator_b_refunds", ["payment_id"])
    op.create_table(
        "simulator_b_notifications",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("payment_id", sa.BigInteger, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("body", JsonType, nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", UtcDateTime, nullable=False),
        sa.Column("last_error", sa.String(255), nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_simulator_b_notifications_status_next_attempt_at",
        "simulator_b_notifications",
        ["status", "next_attempt_at"],
    )


def downgrade() -> None:
    for table in (
        "simulator_b_notifications",
        "simulator_b_refunds",
        "simulator_b_payments",
        "simulator_b_preferences",
        "simulator_a_transactions",
        "simulator_faults",
    ):
        op.drop_table(table)
