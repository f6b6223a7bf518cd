"""Tables of the reconciliation domain (migration 0018 creates the same names)."""

from sqlalchemy import Column, Index, String, Table, Text, UniqueConstraint

from payorch.db.tables.base import id_column, metadata, reference, timestamp
from payorch.db.types import JsonType

# One row per application and day: the run asked for (by the API, the dashboard or the daily
# job) and its outcome. Asking again while it is QUEUED or RUNNING starts nothing more.
reconciliation_runs = Table(
    "reconciliation_runs",
    metadata,
    id_column(),  # rcr_
    reference("application_id", "applications"),
    Column("day", String(10), nullable=False),  # YYYY-MM-DD (UTC)
    Column("status", String(12), nullable=False),  # QUEUED | RUNNING | DONE | FAILED
    Column("summary", JsonType, nullable=True),  # per provider: matched, findings, unavailable
    Column("error", String(255), nullable=True),
    timestamp("requested_at"),
    timestamp("started_at", nullable=True),
    timestamp("finished_at", nullable=True),
    timestamp("lease_until", nullable=True),  # the worker running it; another may take it after
    UniqueConstraint("application_id", "day"),
    Index("ix_reconciliation_runs_status_requested_at", "status", "requested_at"),
)

# What did not match, with both sides' values. One row per (application, provider, kind,
# subject): a day reconciled again, or by two workers at once, finds the same row and says
# nothing twice.
reconciliation_findings = Table(
    "reconciliation_findings",
    metadata,
    id_column(),  # rcf_
    reference("application_id", "applications"),
    Column("day", String(10), nullable=False),
    Column("provider", String(64), nullable=False),
    Column("connector_id", String(40), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("subject", String(128), nullable=False),  # the provider's payment reference
    Column("payment_intent_id", String(40), nullable=True),
    Column("action", String(12), nullable=False),  # APPLIED | FLAGGED
    Column("status", String(12), nullable=False),  # OPEN | RESOLVED (APPLIED ones: RESOLVED)
    Column("payorch_values", JsonType, nullable=False),
    Column("provider_values", JsonType, nullable=False),
    Column("note", Text, nullable=True),
    timestamp("resolved_at", nullable=True),
    timestamp("created_at"),
    UniqueConstraint("application_id", "provider", "kind", "subject"),
    Index("ix_reconciliation_findings_application_id_day", "application_id", "day"),
)
