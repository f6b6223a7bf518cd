"""Tables of the simulator domain: the sandbox providers' own records (see migration 0005).

Every row carries ``owner``: the application id its MOCK credentials belong to (or "public" for
provider A's published integration keys), so each application sees only its own state.
Provider B amounts are kept in hundredths (the API speaks decimal numbers with two places).
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from payorch.db.tables.base import id_column, metadata, timestamp
from payorch.db.types import JsonType

simulator_faults = Table(
    "simulator_faults",
    metadata,
    Column("owner", String(40), primary_key=True),
    Column("provider", String(40), primary_key=True),  # the simulator's name (SimulatedProvider.name)
    Column("mode", String(8), nullable=False),  # ok | error | timeout
    timestamp("updated_at"),
)

# The simulated market (docs/simulator.md, "The simulated market"): how the buyer of this owner's checkouts
# at that provider decides, as probabilities adding up to 1 (migration 0016).
simulator_markets = Table(
    "simulator_markets",
    metadata,
    Column("owner", String(40), primary_key=True),
    Column("provider", String(40), primary_key=True),  # the simulator's name
    Column("approve", Float, nullable=False),
    Column("decline", Float, nullable=False),
    Column("give_up", Float, nullable=False),
    Column("pending", Float, nullable=False),
    timestamp("updated_at"),
)

# Each simulated provider's first answer under a request's key (Idempotency-Key and the like),
# answered again to the same request under it (payorch.simulator.replays, migration 0030).
simulator_replays = Table(
    "simulator_replays",
    metadata,
    Column("provider", String(40), primary_key=True),  # the simulator's name
    Column("owner", String(40), primary_key=True),
    Column("key", String(255), primary_key=True),
    Column("fingerprint", String(64), nullable=False),  # sha256 of what makes it the same request
    Column("status_code", Integer, nullable=False),
    Column("body", JsonType, nullable=False),
    timestamp("created_at"),
    Index("ix_simulator_replays_owner_created_at", "owner", "created_at"),
)

# Provider A (Webpay Plus REST 1.2) transactions, one per token.
simulator_a_transactions = Table(
    "simulator_a_transactions",
    metadata,
    Column("token", String(64), primary_key=True),
    Column("owner", String(40), nullable=False),
    Column("buy_order", String(26), nullable=False),
    Column("session_id", String(61), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("return_url", String(255), nullable=False),
    timestamp("created_at"),
    # The buyer's choice: approve | reject | cancel | timeout | error (null: nothing yet)
    Column("outcome", String(8), nullable=True),
    timestamp("decided_at", nullable=True),
    timestamp("committed_at", nullable=True),
    # INITIALIZED | AUTHORIZED | FAILED | REVERSED | NULLIFIED | PARTIALLY_NULLIFIED
    Column("status", String(24), nullable=False),
    Column("response_code", Integer, nullable=True),
    Column("authorization_code", String(6), nullable=True),
    Column("card_number", String(4), nullable=True),
    Column("payment_type_code", String(2), nullable=True),
    Column("nullified_amount", BigInteger, nullable=False),
    # Deferred capture (migration 0025): made with a deferred-capture commerce code; its one
    # capture (amount, time); the hold's end, set at approval and moved by the clock control.
    Column("deferred", Boolean, nullable=False),
    Column("captured_amount", BigInteger, nullable=True),
    timestamp("captured_at", nullable=True),
    timestamp("capture_before", nullable=True),
    Index("ix_simulator_a_transactions_owner_created_at", "owner", "created_at"),
)

# Provider B (Checkout Pro) preferences, payments, refunds and outgoing notifications.
simulator_b_preferences = Table(
    "simulator_b_preferences",
    metadata,
    Column("id", String(80), primary_key=True),  # <collector_id>-<uuid>
    Column("owner", String(40), nullable=False),
    Column("external_reference", String(256), nullable=True),
    Column("currency_id", String(3), nullable=False),
    Column("amount_hundredths", BigInteger, nullable=False),
    Column("expires", Boolean, nullable=False),
    timestamp("expiration_date_from", nullable=True),
    timestamp("expiration_date_to", nullable=True),
    Column("body", JsonType, nullable=False),  # the preference as the API shows it
    timestamp("created_at"),
    Index("ix_simulator_b_preferences_owner_external_reference", "owner", "external_reference"),
)

simulator_b_payments = Table(
    "simulator_b_payments",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("owner", String(40), nullable=False),
    Column("preference_id", String(80), nullable=False),
    Column("collector_id", BigInteger, nullable=False),
    Column("merchant_order_id", BigInteger, nullable=False),
    Column("external_reference", String(256), nullable=True),
    Column("description", String(256), nullable=True),
    Column("status", String(16), nullable=False),
    Column("status_detail", String(40), nullable=False),
    Column("payment_type_id", String(24), nullable=False),
    Column("payment_method_id", String(24), nullable=False),
    Column("currency_id", String(3), nullable=False),
    Column("amount_hundredths", BigInteger, nullable=False),
    Column("refunded_hundredths", BigInteger, nullable=False),
    Column("authorization_code", String(16), nullable=True),
    Column("notification_url", Text, nullable=True),
    timestamp("date_created"),
    timestamp("date_approved", nullable=True),
    timestamp("date_last_updated"),
    Index("ix_simulator_b_payments_owner_external_reference", "owner", "external_reference"),
    Index("ix_simulator_b_payments_preference_id", "preference_id"),
)

simulator_b_refunds = Table(
    "simulator_b_refunds",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("owner", String(40), nullable=False),
    Column("payment_id", BigInteger, nullable=False),
    Column("amount_hundredths", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),
    timestamp("date_created"),
    Index("ix_simulator_b_refunds_payment_id", "payment_id"),
)


# Provider B's notifications before the simulator's outbox (simulator/outbox, migration 0031):
# no longer written or read; kept for the previous release during a rolling upgrade, dropped in
# a later release (docs/deployment.md, "Upgrading").
simulator_b_notifications = Table(
    "simulator_b_notifications",
    metadata,
    id_column(),
    Column("owner", String(40), nullable=False),
    Column("payment_id", BigInteger, nullable=False),
    Column("url", Text, nullable=False),
    Column("body", JsonType, nullable=False),
    Column("status", String(12), nullable=False),  # PENDING | DELIVERED | GAVE_UP
    Column("attempts", Integer, nullable=False),
    timestamp("next_attempt_at"),
    Column("last_error", String(255), nullable=True),
    timestamp("created_at"),
    Index("ix_simulator_b_notifications_status_next_attempt_at", "status", "next_attempt_at"),
)
