"""Tables of payments (created when a provider authorizes). Connectors and checkouts join here."""

from sqlalchemy import BigInteger, Column, ForeignKey, Index, String, Table

from payorch.db.tables.base import metadata
from payorch.db.types import UtcDateTime

payments = Table(
    "payments",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("application_id", String(40), ForeignKey("applications.id"), nullable=False),
    Column(
        "payment_intent_id",
        String(40),
        ForeignKey("payment_intents.id"),
        nullable=False,
        unique=True,  # one payment per intent, whatever races
    ),
    Column("merchant_account_id", String(40), ForeignKey("merchant_accounts.id"), nullable=False),
    Column("external_reference", String(64), nullable=False),
    Column("status", String(24), nullable=False),  # AUTHORIZED | PARTIALLY_REFUNDED | REFUNDED
    Column("amount", BigInteger, nullable=False),
    Column("refunded_amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("provider", String(64), nullable=False),
    Column("provider_reference", String(128), nullable=False),  # token (A) or payment id (B)
    Column("authorization_code", String(64), nullable=True),
    Column("authorized_at", UtcDateTime, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Index("ix_payments_application_id_id", "application_id", "id"),
    Index("ix_payments_application_id_status_id", "application_id", "status", "id"),
)
