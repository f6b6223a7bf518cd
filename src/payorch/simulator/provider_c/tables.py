"""Simulated provider C's tables (migrations 0013, 0015, 0019, 0025; its replayed answers: the
shared simulator_replays, payorch.simulator.replays; its events: the simulator's outbox, 0031).
Every row carries
``owner``: the application whose MOCK secret key made it, or "public" for the published test
key. Amounts are integers in the provider's unit (the currency's minor unit; whole units for
zero-decimal currencies)."""

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table, Text

from payorch.db.tables.base import metadata, timestamp
from payorch.db.types import JsonType

simulator_c_sessions = Table(
    "simulator_c_sessions",
    metadata,
    Column("id", String(80), primary_key=True),  # cs_test_...
    Column("owner", String(40), nullable=False),
    Column("status", String(12), nullable=False),  # open | complete | expired
    Column("payment_status", String(24), nullable=False),  # unpaid | paid
    Column("amount_total", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),  # lower case, as on the wire
    Column("client_reference_id", String(200), nullable=True),
    Column("payment_intent_id", String(40), nullable=True),
    Column("success_url", Text, nullable=False),
    Column("cancel_url", Text, nullable=True),
    Column("product_name", String(250), nullable=False),
    Column("metadata", JsonType, nullable=False),
    Column("intent_metadata", JsonType, nullable=False),
    Column("capture_method", String(16), nullable=False),  # automatic | manual (payment_intent_data)
    timestamp("expires_at"),
    timestamp("created_at"),
    Index("ix_simulator_c_sessions_owner_created_at", "owner", "created_at"),
    Index("ix_simulator_c_sessions_owner_client_reference_id", "owner", "client_reference_id"),
    Index("ix_simulator_c_sessions_payment_intent_id", "payment_intent_id"),
)

simulator_c_payment_intents = Table(
    "simulator_c_payment_intents",
    metadata,
    Column("id", String(40), primary_key=True),  # pi_...
    Column("owner", String(40), nullable=False),
    Column("session_id", String(80), nullable=False),
    Column("status", String(32), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("amount_received", BigInteger, nullable=False),
    Column("amount_refunded", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("latest_charge", String(40), nullable=True),
    Column("decline_code", String(40), nullable=True),  # the last attempt's, when declined
    Column("metadata", JsonType, nullable=False),
    # Manual capture (migration 0025): what can still be captured, until capture_before (the
    # charge's ``payment_method_details.card.capture_before``); a lapsed or canceled hold's end.
    Column("capture_method", String(16), nullable=False),
    Column("amount_capturable", BigInteger, nullable=False),
    timestamp("capture_before", nullable=True),
    timestamp("canceled_at", nullable=True),
    Column("cancellation_reason", String(32), nullable=True),
    timestamp("created_at"),
    # Due holds, found by the worker's pass that lets them lapse.
    Index("ix_simulator_c_payment_intents_status_capture_before", "status", "capture_before"),
    # Listed by created time, newest first, a page at a time (reconciliation reads a day).
    Index("ix_simulator_c_payment_intents_owner_created_at", "owner", "created_at"),
)

simulator_c_refunds = Table(
    "simulator_c_refunds",
    metadata,
    Column("id", String(40), primary_key=True),  # re_...
    Column("owner", String(40), nullable=False),
    Column("payment_intent_id", String(40), nullable=False),
    Column("charge", String(40), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("status", String(16), nullable=False),
    Column("reason", String(32), nullable=True),
    Column("metadata", JsonType, nullable=False),
    timestamp("created_at"),
    Index("ix_simulator_c_refunds_payment_intent_id", "payment_intent_id"),
    Index("ix_simulator_c_refunds_owner_created_at", "owner", "created_at"),
)

# Disputes (chargebacks) on a paid PaymentIntent, opened and closed by the settle control.
simulator_c_disputes = Table(
    "simulator_c_disputes",
    metadata,
    Column("id", String(40), primary_key=True),  # dp_...
    Column("owner", String(40), nullable=False),
    Column("payment_intent_id", String(40), nullable=False),
    Column("charge", String(40), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("status", String(24), nullable=False),  # needs_response | won | lost
    Column("reason", String(32), nullable=False),
    timestamp("created_at"),
    Index("ix_simulator_c_disputes_payment_intent_id", "payment_intent_id"),
)


# Its events before the simulator's outbox (simulator/outbox, migration 0031): no longer written
# or read; kept for the previous release during a rolling upgrade, dropped in a later release
# (docs/deployment.md, "Upgrading").
simulator_c_events = Table(
    "simulator_c_events",
    metadata,
    Column("id", String(40), primary_key=True),  # evt_... (one row per delivery)
    Column("owner", String(40), nullable=False),
    Column("session_id", String(80), nullable=False),
    Column("url", Text, nullable=False),
    Column("body", JsonType, nullable=False),
    Column("status", String(12), nullable=False),  # PENDING | DELIVERED | GAVE_UP
    Column("attempts", Integer, nullable=False),
    timestamp("next_attempt_at"),
    Column("last_error", String(255), nullable=True),
    timestamp("created_at"),
    Index("ix_simulator_c_events_status_next_attempt_at", "status", "next_attempt_at"),
    Index("ix_simulator_c_events_session_id", "session_id"),
)
