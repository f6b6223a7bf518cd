"""Payment links: a page a buyer opens to pay an amount an operator set (payorch.links)."""

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table, Text

from payorch.db.tables.base import id_column, metadata, reference, timestamp
from payorch.db.types import JsonType

payment_links = Table(
    "payment_links",
    metadata,
    id_column(),
    reference("application_id", "applications"),
    reference("merchant_account_id", "merchant_accounts"),
    # ACTIVE | COMPLETED | EXPIRED | DEACTIVATED; an ACTIVE link past expires_at or with
    # max_payments paid intents is moved when next read (payorch.links.settle) or by the worker.
    Column("status", String(16), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("description", String(255), nullable=False),
    Column("external_reference", String(64), nullable=True),
    timestamp("expires_at", nullable=True),
    Column("max_payments", Integer, nullable=False),
    Column("after_payment_url", Text, nullable=True),
    Column("metadata", JsonType, nullable=False),
    Column("buyer_message", String(500), nullable=True),  # shown to buyers once deactivated
    timestamp("created_at"),
    timestamp("updated_at"),
    Index("ix_payment_links_application_id_id", "application_id", "id"),
    Index("ix_payment_links_application_id_status_id", "application_id", "status", "id"),
    # The worker's expiry sweep: ACTIVE links by expiry.
    Index("ix_payment_links_status_expires_at", "status", "expires_at"),
)
