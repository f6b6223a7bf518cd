"""Simulated provider D (Adyen Hosted Checkout): its sessions, each with the payment authorised
in it (payorch.simulator.provider_d.tables). Its replayed answers and notifications use the
shared simulator_replays and simulator_notifications."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0033"
down_revision = "0032"


def upgrade() -> None:
    op.create_table(
        "simulator_d_sessions",
        sa.Column("id", sa.String(20), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("intent", sa.String(200), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("refusals", sa.Integer, nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("manual_capture", sa.Boolean, nullable=False),
        sa.Column("notification_url", sa.Text, nullable=True),
        sa.Column("request", JsonType, nullable=False),
        sa.Column("session_result", sa.String(80), nullable=True),
        sa.Column("psp", sa.String(16), nullable=True),
        sa.Column("payment", sa.String(12), nullable=True),
        sa.Column("held", sa.BigInteger, nullable=False),
        sa.Column("captured", sa.BigInteger, nullable=False),
        sa.Column("refunded", sa.BigInteger, nullable=False),
        sa.Column("hold_ends_at", UtcDateTime, nullable=True),
        sa.Column("expires_at", UtcDateTime, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_simulator_d_sessions_psp", "simulator_d_sessions", ["psp"], unique=True)
    op.create_index("ix_simulator_d_sessions_owner_intent", "simulator_d_sessions", ["owner", "intent"])
    op.create_index(
        "ix_simulator_d_sessions_payment_hold_ends_at", "simulator_d_sessions", ["payment", "hold_ends_at"]
    )
    op.create_index(
        "ix_simulator_d_sessions_owner_created_at", "simulator_d_sessions", ["owner", "created_at"]
    )


def downgrade() -> None:
    op.drop_table("simulator_d_sessions")
