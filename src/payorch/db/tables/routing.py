"""Tables of the routing domain: a merchant's routing versions (payorch.routing)."""

from sqlalchemy import Boolean, Column, Index, Integer, Table, UniqueConstraint, text

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
