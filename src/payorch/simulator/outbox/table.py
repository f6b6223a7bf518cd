"""The outbox's table (migration 0031): every simulated provider's notifications, written with
the move that made them, sent after its commit, retried by the worker job."""

from sqlalchemy import Column, Index, Integer, String, Table, Text

from payorch.db.tables.base import id_column, metadata, timestamp
from payorch.db.types import JsonType

simulator_notifications = Table(
    "simulator_notifications",
    metadata,
    id_column(),  # smn_... (one row per delivery)
    Column("provider", String(40), nullable=False),  # the simulator's name
    Column("owner", String(40), nullable=False),
    Column("subject", String(80), nullable=False),  # the provider's object it is about
    Column("url", Text, nullable=False),
    Column("body", JsonType, nullable=False),
    Column("status", String(12), nullable=False),  # PENDING | DELIVERED | GAVE_UP
    Column("attempts", Integer, nullable=False),
    timestamp("next_attempt_at"),
    Column("last_error", String(255), nullable=True),
    timestamp("created_at"),
    Index("ix_simulator_notifications_status_next_attempt_at", "status", "next_attempt_at"),
    Index("ix_simulator_notifications_provider_owner_subject", "provider", "owner", "subject"),
    Index("ix_simulator_notifications_owner_created_at", "owner", "created_at"),
)
