"""Simulated provider D's table (migration 0033): a Hosted Checkout session and the one payment
authorised in it (``psp``), by ``owner`` (an application, or "public"); amounts in minor units."""

from sqlalchemy import BigInteger, Boolean, Column, Index, Integer, String, Table, Text

from payorch.db.tables.base import metadata, timestamp
from payorch.db.types import JsonType

simulator_d_sessions = Table(
    "simulator_d_sessions",
    metadata,
    Column("id", String(20), primary_key=True),  # CS + 16 hex
    Column("owner", String(40), nullable=False),
    Column("intent", String(200), nullable=False),  # metadata.payment_intent_id, else reference
    Column("status", String(16), nullable=False),  # active | completed | refused | canceled
    Column("refusals", Integer, nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("manual_capture", Boolean, nullable=False),
    Column("notification_url", Text, nullable=True),
    Column("request", JsonType, nullable=False),  # the /sessions request, echoed in its answer
    Column("session_result", String(80), nullable=True),
    Column("psp", String(16), nullable=True),  # the authorised payment
    # The payment: authorised (held) | captured | cancelled | expired; None before one.
    Column("payment", String(12), nullable=True),
    Column("held", BigInteger, nullable=False),
    Column("captured", BigInteger, nullable=False),
    Column("refunded", BigInteger, nullable=False),
    timestamp("hold_ends_at", nullable=True),
    timestamp("expires_at"),
    timestamp("created_at"),
    Index("ix_simulator_d_sessions_psp", "psp", unique=True),
    Index("ix_simulator_d_sessions_owner_intent", "owner", "intent"),
    Index("ix_simulator_d_sessions_payment_hold_ends_at", "payment", "hold_ends_at"),
    Index("ix_simulator_d_sessions_owner_created_at", "owner", "created_at"),
)
