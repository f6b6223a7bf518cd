"""Tables of the webhooks domain: endpoints, deliveries (one per event and endpoint), attempts.

A delivery is the unit of work of the worker: PENDING until a 2xx (SUCCEEDED) or until the 7th
attempt of its current schedule fails (EXHAUSTED). A worker claims a due delivery by setting a
lease (``leased_until``, also written to ``next_attempt_at`` so an abandoned claim becomes due
again by itself) and a ``lease_token`` that its result must still match when it is applied.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    text,
)

from payorch.db.tables.base import id_column, metadata, reference, timestamp
from payorch.db.types import JsonType

webhook_endpoints = Table(
    "webhook_endpoints",
    metadata,
    id_column(),
    reference("application_id", "applications"),
    Column("url", Text, nullable=False),
    Column("events", JsonType, nullable=False),  # [] = every event type
    Column("enabled", Boolean, nullable=False),
    # Ordered delivery: one intent's notices to this endpoint one at a time, in event order.
    Column("ordered", Boolean, nullable=False, server_default="0"),
    Column("secret_encrypted", Text, nullable=False),  # runtime.cipher; never returned
    # Secret rotation: the replaced secret still signs, beside the new one, until it expires.
    Column("previous_secret_encrypted", Text, nullable=True),
    timestamp("previous_secret_expires_at", nullable=True),
    timestamp("created_at"),
    timestamp("updated_at"),
    # The failure streak: since when every attempt failed (null after a 2xx) and how many.
    timestamp("failing_since", nullable=True),
    Column("failed_attempts", Integer, nullable=False, server_default="0"),
    # Circuit breaker: while a failing endpoint's breaker is open, no claim considers it.
    timestamp("breaker_until", nullable=True),
    # Backoff of an endpoint failing fast (before its breaker can open): held until then.
    timestamp("backoff_until", nullable=True),
    # Why the endpoint was disabled (null: by hand or enabled) and since when.
    Column("disabled_reason", String(32), nullable=True),
    timestamp("disabled_at", nullable=True),
    Index("ix_webhook_endpoints_application_id_id", "application_id", "id"),
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    id_column(),
    reference("application_id", "applications"),
    Column(
        "endpoint_id",
        String(40),
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE"),
        nullable=False,
    ),
    reference("event_id", "events"),
    Column("event_type", String(64), nullable=False),
    Column("status", String(16), nullable=False),  # PENDING | SUCCEEDED | EXHAUSTED
    Column("attempts", Integer, nullable=False),  # every attempt ever made (history)
    Column("schedule_attempts", Integer, nullable=False),  # attempts of the current schedule (<= 7)
    timestamp("next_attempt_at", nullable=True),  # None once final
    timestamp("leased_until", nullable=True),
    Column("lease_token", String(32), nullable=True),
    timestamp("last_attempt_at", nullable=True),
    Column("response_status", Integer, nullable=True),
    Column("response_excerpt", Text, nullable=True),
    Column("error", String(64), nullable=True),
    Column("failure_reason", String(32), nullable=True),  # the last attempt's (webhooks/failures.py)
    Column("failure_message", String(300), nullable=True),
    timestamp("created_at"),
    timestamp("updated_at"),
    Index("ix_webhook_deliveries_status_next_attempt_at", "status", "next_attempt_at"),
    Index("ix_webhook_deliveries_endpoint_id_id", "endpoint_id", "id"),
    # The attempts in flight of an endpoint, by every worker (the shared per-endpoint cap).
    # Partial: only leased rows are in it, so creating a delivery and recording its result (both
    # write a row without a lease) cost no entry here; only the claim's lease does.
    Index(
        "ix_webhook_deliveries_endpoint_id_leased_until",
        "endpoint_id",
        "leased_until",
        postgresql_where=text("lease_token IS NOT NULL"),
        sqlite_where=text("lease_token IS NOT NULL"),
    ),
    # The claim's per-endpoint probe (repository.due_endpoints, lock_due).
    Index(
        "ix_webhook_deliveries_endpoint_id_status_next_attempt_at",
        "endpoint_id",
        "status",
        "next_attempt_at",
    ),
    Index("ix_webhook_deliveries_event_id", "event_id"),
    # GET /v1/admin/webhook-deliveries: the application's, newest first, optionally by status.
    Index("ix_webhook_deliveries_application_id_id", "application_id", "id"),
    Index("ix_webhook_deliveries_application_id_status_id", "application_id", "status", "id"),
)

webhook_delivery_attempts = Table(
    "webhook_delivery_attempts",
    metadata,
    Column(
        "seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column(
        "delivery_id",
        String(40),
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("number", Integer, nullable=False),  # 1.. over the delivery's whole history
    timestamp("started_at"),
    Column("duration_ms", Integer, nullable=False),
    Column("response_status", Integer, nullable=True),
    Column("response_excerpt", Text, nullable=True),
    Column("error", String(64), nullable=True),  # None on success
    Column("failure_reason", String(32), nullable=True),  # dns_error, timeout, ... (failures.py)
    Column("failure_message", String(300), nullable=True),
    Index("ix_webhook_delivery_attempts_delivery_id_seq", "delivery_id", "seq"),
)
