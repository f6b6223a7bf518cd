"""Tables of the refunds domain (migration 0004 creates the same names)."""

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, String, Table

from payorch.db.tables.base import metadata
from payorch.db.types import UtcDateTime

# A refund is reserved (PENDING) before the provider is called, so concurrent refunds can
# never promise more than the payment's amount; the provider's answer settles it.
refunds = Table(
    "refunds",
    metadata,
    Column("id", String(40), primary_key=True),  # rfd_; also the provider's idempotency key
    Column("application_id", String(40), ForeignKey("applications.id"), nullable=False),
    Column("payment_id", String(40), ForeignKey("payments.id"), nullable=False),
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
    Column("next_check_at", UtcDateTime, nullable=True),
    Column("checks", Integer, nullable=False, default=0, server_default="0"),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_refunds_payment_id_id", "payment_id", "id"),
    Index("ix_refunds_status_next_check_at", "status", "next_check_at"),
    Index("uq_refunds_payment_id_idempotency_key", "payment_id", "idempotency_key", unique=True),
)
