"""The activity log (owned by payorch.activity): one append-only entry per change, chained per
application by hashes, and the head of each application's chain."""

from sqlalchemy import BigInteger, Column, Index, String, Table, Text, UniqueConstraint

from payorch.db.tables.base import id_column, metadata, reference, timestamp
from payorch.db.types import JsonType

activity_log = Table(
    "activity_log",
    metadata,
    id_column(),  # act_...
    reference("application_id", "applications"),
    Column("seq", BigInteger, nullable=False),  # 1, 2, 3... within the application's chain
    timestamp("at"),
    Column("actor_type", String(16), nullable=False),  # user | api_key | system
    Column("actor_id", String(64), nullable=False),
    Column("actor_email", String(254), nullable=True),
    Column("action", String(64), nullable=False),
    Column("resource_type", String(40), nullable=False),
    Column("resource_id", String(64), nullable=False),
    Column("outcome", String(16), nullable=False),  # success | failure
    Column("origin_ip", String(64), nullable=True),
    Column("origin_user_agent", String(512), nullable=True),
    Column("request_id", String(64), nullable=True),
    Column("changes", JsonType, nullable=False),  # names and safe values, never a secret
    Column("previous_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),  # SHA-256 of the content and previous_hash
    UniqueConstraint("application_id", "seq"),
    Index("ix_activity_log_application_id_at", "application_id", "at"),
    Index("ix_activity_log_application_id_actor_id_seq", "application_id", "actor_id", "seq"),
    Index("ix_activity_log_application_id_resource_id_seq", "application_id", "resource_id", "seq"),
    Index("ix_activity_log_application_id_action_seq", "application_id", "action", "seq"),
)

# One row per application: the last entry's seq and hash. Appending locks this row, so entries
# of one application are chained one after the other; verifying compares the chain's end to it,
# so a deleted last entry is found too.
activity_heads = Table(
    "activity_heads",
    metadata,
    reference("application_id", "applications", unique=True),
    Column("seq", BigInteger, nullable=False),
    Column("hash", Text, nullable=False),
    timestamp("updated_at"),
)
