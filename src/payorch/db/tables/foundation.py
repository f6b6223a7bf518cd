"""Applications, merchants, API keys, payment intents, events (the outbox) and idempotency."""

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table, Text

from payorch.db.tables.base import id_column, metadata, reference, timestamp
from payorch.db.types import JsonType, UtcDateTime

applications = Table(
    "applications",
    metadata,
    id_column(),
    Column("name", String(200), nullable=False),
    Column("environment", String(16), nullable=False),  # SANDBOX | PRODUCTION
    timestamp("created_at"),
)

merchant_accounts = Table(
    "merchant_accounts",
    metadata,
    id_column(),
    reference("application_id", "applications", index=True),
    Column("name", String(200), nullable=False),
    timestamp("created_at"),
)

api_credentials = Table(
    "api_credentials",
    metadata,
    id_column(),
    reference("application_id", "applications", index=True),
    Column("name", String(200), nullable=True),
    Column("prefix", String(32), nullable=False, unique=True),
    Column("secret_hash", String(64), nullable=False),  # SHA-256 hex of the secret part
    timestamp("created_at"),
    timestamp("revoked_at", nullable=True),
    Column("scopes", JsonType, nullable=True),  # null: every scope (a key made before scopes)
    timestamp("expires_at", nullable=True),  # refused from then on
    timestamp("last_used_at", nullable=True),  # written at most once a minute per key
)

payment_intents = Table(
    "payment_intents",
    metadata,
    id_column(),
    reference("application_id", "applications"),
    reference("merchant_account_id", "merchant_accounts"),
    Column("status", String(24), nullable=False),
    Column("external_reference", String(64), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("description", String(255), nullable=True),
    Column("requested_provider", String(64), nullable=False),
    Column("provider", String(64), nullable=True),  # the chosen provider, set by a checkout
    Column("return_url", Text, nullable=False),
    Column("metadata", JsonType, nullable=False),
    timestamp("created_at"),
    timestamp("updated_at"),
    # Why its latest checkout went where it went (payorch.routing.record), set with ``provider``.
    Column("routing", JsonType, nullable=True),
    # Why its payment did not go through, in payorch's shape (payorch.providers.payment_errors).
    Column("last_payment_error", JsonType, nullable=True),
    # The payment link whose buyer page made it (payorch.links); null for the API's intents.
    Column("payment_link_id", String(40), nullable=True),
    Index("ix_payment_intents_payment_link_id", "payment_link_id"),
    # automatic: AUTHORIZED means the money is taken; manual: held (REQUIRES_CAPTURE) until
    # captured or voided (payments/holds.py).
    Column("capture_method", String(16), nullable=False, server_default="automatic"),
    Index("ix_payment_intents_application_id_id", "application_id", "id"),
    # The list's filters (GET /v1/payment-intents): each ends with the id the keyset walks.
    Index("ix_payment_intents_application_id_status_id", "application_id", "status", "id"),
    Index(
        "ix_payment_intents_application_id_merchant_account_id_id",
        "application_id",
        "merchant_account_id",
        "id",
    ),
    Index(
        "ix_payment_intents_application_id_external_reference_id",
        "application_id",
        "external_reference",
        "id",
    ),
)

# Append-only. Each row is a state change's event, written in the transaction of the change;
# `payload` holds the exact JSON body that webhook deliveries sign and send.
events = Table(
    "events",
    metadata,
    # seq gives a total order (ids share a millisecond); id is the public identifier.
    Column(
        "seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("id", String(40), nullable=False, unique=True),
    reference("application_id", "applications"),
    Column("type", String(64), nullable=False),
    Column("payment_intent_id", String(40), nullable=True),  # null: webhook_endpoint.disabled
    Column("payload", Text, nullable=False),
    timestamp("created_at"),
    # W3C traceparent of the span that wrote the event (null while tracing is off): its webhook
    # attempts continue that trace (observability/tracing.py).
    Column("traceparent", String(55), nullable=True),
    Index("ix_events_application_id_seq", "application_id", "seq"),
    Index("ix_events_payment_intent_id_seq", "payment_intent_id", "seq"),
)

# One row per (application, operation, key). The unique primary key is what makes two
# concurrent requests with one key create at most one resource.
idempotency_records = Table(
    "idempotency_records",
    metadata,
    Column("application_id", String(40), primary_key=True),
    Column("operation", String(300), primary_key=True),  # "POST /v1/payment-intents"
    Column("key", String(255), primary_key=True),
    Column("fingerprint", String(64), nullable=False),
    Column("state", String(16), nullable=False),  # IN_PROGRESS | COMPLETED
    timestamp("locked_until"),
    Column("response_status", Integer, nullable=True),
    Column("response_body", Text, nullable=True),
    timestamp("created_at"),
    Column("expires_at", UtcDateTime, nullable=False, index=True),
)
