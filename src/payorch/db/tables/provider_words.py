"""Tables of the provider_words domain (migration 0032 creates the same names)."""

from sqlalchemy import BigInteger, Boolean, Column, Index, String, Table, Text, UniqueConstraint

from payorch.db.tables.base import id_column, metadata, timestamp

# A provider's verified notification items, kept as its word (providers/words.py). One row per
# connector and (reference, event, success), the key the provider itself repeats a
# notification under (Adyen: pspReference, eventCode, success): a repeat finds the row.
provider_words = Table(
    "provider_words",
    metadata,
    id_column(),  # pwd_
    # No foreign key: a connector no checkout used may be deleted (connectors/repository.py),
    # and a word kept for it (a provider's test notification) must not stop that.
    Column("connector_id", String(40), nullable=False),
    Column("provider", String(64), nullable=False),
    Column("event", String(64), nullable=False),
    Column("reference", String(128), nullable=False),
    Column("success", Boolean, nullable=False),
    Column("original_reference", String(128), nullable=True),
    Column("merchant_reference", String(255), nullable=True),
    Column("amount", BigInteger, nullable=True),
    Column("currency", String(3), nullable=True),
    Column("reason", Text, nullable=True),
    timestamp("event_at", nullable=True),
    timestamp("recorded_at"),
    UniqueConstraint("connector_id", "reference", "event", "success"),
    Index("ix_provider_words_connector_id_original_reference", "connector_id", "original_reference"),
    Index("ix_provider_words_connector_id_merchant_reference", "connector_id", "merchant_reference"),
)
