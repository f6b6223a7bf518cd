"""Tables of the routing domain: a merchant's routing versions (payorch.routing)."""

from sqlalchemy import Boolean, Column, Index, Integer, String, Table, UniqueConstraint, text

from payorch.db.tables.base import id_column, metadata, reference, timestamp
from payorch.db.types import JsonType

ACTIVE = text("active")

# Each replacement of a merchant's rules is a new version (1, 2, ...), never changed afterwards;
# one of them is active (the partial unique index makes it at most one).
routing_versions = Table(
    "routing_versions",
    metadata,
    id_column(),
    reference("application_id", "applications"),
    reference("merchant_account_id", "merchant_accounts"),
    Column("version", Integer, nullable=False),
    Column("program", JsonType, nullable=False),  # payorch.routing.program.RoutingProgram
    Column("active", Boolean, nullable=False),
    timestamp("created_at"),
    timestamp("activated_at", nullable=True),  # the last time it became active
    UniqueConstraint("merchant_account_id", "version"),
    Index(
        "ix_routing_versions_merchant_account_id_active",
        "merchant_account_id",
        unique=True,
        postgresql_where=ACTIVE,
        sqlite_where=ACTIVE,
    ),
)

# Provider health history (payorch.routing.health_history): a health key's transitions
# ("skipped", "available"; application_id and connector_id NULL when the key is shared by every
# connector of a provider and mode) and a connector's provider call failures ("failed", one row per
# minute with its count). Purged after two days.
provider_health_events = Table(
    "provider_health_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("health_key", String(200), nullable=False),
    Column("application_id", String(40), nullable=True),
    Column("connector_id", String(40), nullable=True),
    Column("provider", String(40), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("count", Integer, nullable=False),
    timestamp("at"),
    Index("ix_provider_health_events_health_key_at", "health_key", "at"),
    Index("ix_provider_health_events_connector_id_at", "connector_id", "at"),
    Index("ix_provider_health_events_at", "at"),
)
