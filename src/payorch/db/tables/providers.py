"""Tables of the providers domain: payments, connectors (provider configurations), checkouts."""

from sqlalchemy import BigInteger, Boolean, Column, Index, Integer, String, Table, Text, UniqueConstraint

from payorch.db.tables.base import id_column, metadata, reference, timestamp
from payorch.db.types import JsonType

payments = Table(
    "payments",
    metadata,
    id_column(),
    reference("application_id", "applications"),
    reference("payment_intent_id", "payment_intents", unique=True),  # one payment per intent
    reference("merchant_account_id", "merchant_accounts"),
    Column("external_reference", String(64), nullable=False),
    # REQUIRES_CAPTURE | AUTHORIZED | PARTIALLY_REFUNDED | REFUNDED | VOIDED
    Column("status", String(24), nullable=False),
    Column("amount", BigInteger, nullable=False),  # what the provider authorized (held, for manual)
    Column("refunded_amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("provider", String(64), nullable=False),
    Column("provider_reference", String(128), nullable=False),  # token (A) or payment id (B)
    Column("authorization_code", String(64), nullable=True),
    timestamp("authorized_at"),
    timestamp("created_at"),
    # A chargeback or mediation after the authorization (payments.disputes): OPEN | WON | LOST.
    Column("dispute_status", String(8), nullable=True),
    Column("dispute_kind", String(16), nullable=True),  # chargeback | mediation
    timestamp("disputed_at", nullable=True),
    timestamp("dispute_closed_at", nullable=True),
    # The order of the newest dispute observation applied (payments.disputes): the provider's
    # id of the dispute, its time, and the state's rank within the dispute's life.
    Column("dispute_reference", String(255), nullable=True),
    timestamp("dispute_observed_at", nullable=True),
    Column("dispute_rank", Integer, nullable=True),
    # Holds (payments/holds.py): automatic | manual; what was captured (all of it for automatic)
    # and what the provider released of a partial capture; until when the hold may be captured.
    Column("capture_method", String(16), nullable=False, server_default="automatic"),
    Column("amount_captured", BigInteger, nullable=False, server_default="0"),
    Column("amount_released", BigInteger, nullable=False, server_default="0"),
    timestamp("capture_before", nullable=True),
    timestamp("captured_at", nullable=True),
    # A capture or void sent to the provider and not yet settled (capture | void), its amount,
    # and when the reconciliation job may read the provider about it (payments/hold_job.py).
    Column("hold_action", String(16), nullable=True),
    Column("hold_action_amount", BigInteger, nullable=True),
    timestamp("hold_action_check_at", nullable=True),
    # A hold nobody captured (payments/lapse_job.py): when payment.capture_due was sent (once),
    # and when the deadline check may ask the provider again (null: at capture_before).
    timestamp("capture_due_at", nullable=True),
    timestamp("hold_check_at", nullable=True),
    Index("ix_payments_application_id_id", "application_id", "id"),
    Index("ix_payments_application_id_status_id", "application_id", "status", "id"),
    # A provider notification names the provider's payment: find ours by it.
    Index("ix_payments_provider_provider_reference", "provider", "provider_reference"),
    Index("ix_payments_hold_action_check_at", "hold_action_check_at"),  # the hold job's due ones
    Index("ix_payments_status_capture_before", "status", "capture_before"),  # holds coming due
)

# A merchant's configuration for one provider. The unique (merchant, provider) pair is what
# answers 409 CONNECTOR_CONFIG_ALREADY_EXISTS, even for two concurrent creates.
connectors = Table(
    "connectors",
    metadata,
    id_column(),
    reference("application_id", "applications"),
    reference("merchant_account_id", "merchant_accounts"),
    Column("provider", String(64), nullable=False),
    Column("mode", String(16), nullable=False),  # MOCK | SANDBOX | PRODUCTION
    Column("enabled", Boolean, nullable=False),
    Column("priority", Integer, nullable=False),
    Column("credentials", Text, nullable=True),  # Fernet token of the JSON credentials
    timestamp("created_at"),
    timestamp("updated_at"),
    UniqueConstraint("merchant_account_id", "provider"),
)

# One row per checkout handed out. At most one is ACTIVE per intent (replacement marks the
# earlier one REPLACED in the same transaction); a return or notification for a checkout that
# is not ACTIVE never moves the intent. The worker columns drive expiry and reconciliation.
checkouts = Table(
    "checkouts",
    metadata,
    id_column(),
    reference("application_id", "applications"),
    reference("payment_intent_id", "payment_intents"),
    reference("connector_id", "connectors"),
    Column("provider", String(64), nullable=False),
    Column("status", String(16), nullable=False),  # ACTIVE | REPLACED | CLOSED
    Column("reference", String(128), nullable=False),  # token (A) or preference id (B)
    Column("payment_reference", String(128), nullable=True),  # provider payment id, once known
    Column("url", Text, nullable=False),
    Column("method", String(8), nullable=False),
    Column("fields", JsonType, nullable=False),
    Column("provider_data", JsonType, nullable=False),  # the adapter's opaque keepsake
    timestamp("expires_at"),
    timestamp("created_at"),
    timestamp("closed_at", nullable=True),
    # Worker: when to look at this checkout next (expiry or reconciliation), how many times it
    # was looked at, and a lease so two workers never handle it at once.
    timestamp("next_check_at", nullable=True),
    Column("check_attempts", Integer, nullable=False, default=0, server_default="0"),
    timestamp("lease_until", nullable=True),
    # When the buyer came back through this checkout's return, the provider having confirmed the
    # return was its own (migration 0034): CheckoutRef.buyer_returned.
    timestamp("buyer_returned_at", nullable=True),
    Index("ix_checkouts_payment_intent_id_created_at", "payment_intent_id", "created_at"),
    Index("ix_checkouts_reference", "reference"),
    Index("ix_checkouts_status_next_check_at", "status", "next_check_at"),
    # Reconciliation reads a connector's checkouts of a day.
    Index("ix_checkouts_connector_id_created_at", "connector_id", "created_at"),
)
