"""Simulated provider C (Stripe Checkout): sessions, payment intents, refunds, the first
answer of each Idempotency-Key, and the outbox of signed events
(payorch.simulator.provider_c.tables)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    op.create_table(
        "simulator_c_sessions",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("payment_status", sa.String(24), nullable=False),
        sa.Column("amount_total", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("client_reference_id", sa.String(200), nullable=True),
        sa.Column("payment_intent_id", sa.String(40), nullable=True),
        sa.Column("success_url", sa.Text, nullable=False),
        sa.Column("cancel_url", sa.Text, nullable=True),
        sa.Column("product_name", sa.String(250), nullable=False),
        sa.Column("metadata", JsonType, nullable=False),
        sa.Column("intent_metadata", JsonType, nullable=False),
        sa.Column("expires_at", UtcDateTime, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_simulator_c_sessions_owner_created_at", "simulator_c_sessions", ["owner", "created_at"]
    )
    op.create_index(
        "ix_simulator_c_sessions_owner_client_reference_id",
        "simulator_c_sessions",
        ["owner", "client_reference_id"],
    )
    op.create_index(
        "ix_simulator_c_sessions_payment_intent_id", "simulator_c_sessions", ["payment_intent_id"]
    )
    op.create_table(
        "simulator_c_payment_intents",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("session_id", sa.String(80), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("amount_received", sa.BigInteger, nullable=False),
        sa.Column("amount_refunded", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("latest_charge", sa.String(40), nullable=True),
        sa.Column("decline_code", sa.String(40), nullable=True),
        sa.Column("metadata", JsonType, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_table(
        "simulator_c_refunds",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("payment_intent_id", sa.String(40), nullable=False),
        sa.Column("charge", sa.String(40), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(32), nullable=True),
        sa.Column("metadata", JsonType, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_simulator_c_refunds_payment_intent_id", "simulator_c_refunds", ["payment_intent_id"])
    op.create_table(
        "simulator_c_idempotency",
        sa.Column("owner", sa.String(40), primary_key=True),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("status_code", sa.Integer, nullable=False),
        sa.Column("body", JsonType, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_table(
        "simulator_c_events",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("session_id", sa.String(80), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("body", JsonType, nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", UtcDateTime, nullable=False),
        sa.Column("last_error", sa.String(255), nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_simulator_c_events_status_next_attempt_at", "simulator_c_events", ["status", "next_attempt_at"]
    )
    op.create_index("ix_simulator_c_events_session_id", "simulator_c_events", ["session_id"])


def downgrade() -> None:
    for table in (
        "simulator_c_events",
        "simulator_c_idempotency",
        "simulator_c_refunds",
        "simulator_c_payment_intents",
        "simulator_c_sessions",
    ):
        op.drop_table(table)
