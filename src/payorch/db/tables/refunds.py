"""Tables of the refunds domain (migration 0004 creates the same names)."""

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table

from payorch.db.tables.base import id_column, metadata, reference, timestamp

# A refund is reserved (PENDING) before the provider is called, so concurrent refunds can
# never promise more than the payment's amount; the provider's answer settles it.
refunds = Table(
    "refunds",
    metadata,
    id_column(),  # rfd_; also the provider's idempotency key
    reference("application_id", "applications"),
    reference("payment_id", "payments"),
    Column("payment_intent_id", String(40), nullable=False),
    Column("status", String(16), nullable=False),  # PENDING | SUCCEEDED | FAILED
    Column("amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("reason", String(255), nullable=True),
    Column("failure_reason", String(255), nullable=True),
    Column("provider_refund_id", String(128), nullable=True),
    # The request's Idempotency-Key: a retry after a crash finds this refund instead of
    # reserving a second one. Cleared when the refund FAILED (the key may run again).
    Column("idempotency_key", String(255), nullable=True),
    # PENDING only: when the worker may ask the provider what became of it. Set at creation to
    # after the request's own call must have ended, so a crash mid-call is also resolved.
    timestamp("next_check_at", nullable=True),
    Column("checks", Integer, nullable=False, default=0, server_default="0"),
    timestamp("created_at"),
    timestamp("updated_at"),
    Index("ix_refunds_payment_id_id", "payment_id", "id"),
    Index("ix_refunds_status_next_check_at", "status", "next_check_at"),
    Index("uq_refunds_payment_id_idempotency_key", "payment_id", "idempotency_key", unique=True),
)
