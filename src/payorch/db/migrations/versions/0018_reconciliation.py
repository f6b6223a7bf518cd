"""Reconciliation runs and findings (payorch.db.tables.reconciliation), and the index that reads
a connector's checkouts of a day."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0018"
down_revision = "0017"


def upgrade() -> None:
    op.create_table(
        "reconciliation_runs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("summary", JsonType, nullable=True),
        sa.Column("error", sa.String(255), nullable=True),
        sa.Column("requested_at", UtcDateTime, nullable=False),
        sa.Column("started_at", UtcDateTime, nullable=True),
        sa.Column("finished_at", UtcDateTime, nullable=True),
        sa.Column("lease_until", UtcDateTime, nullable=True),
        sa.UniqueConstraint("application_id", "day", name="uq_reconciliation_runs_application_id_day"),
    )
    op.create_index(
        "ix_reconciliation_runs_status_requested_at", "reconciliation_runs", ["status", "requested_at"]
    )
    op.create_table(
        "reconciliation_findings",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("connector_id", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(128), nullable=False),
        sa.Column("payment_intent_id", sa.String(40), nullable=True),
        sa.Column("action", sa.String(12), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("payorch_values", JsonType, nullable=False),
        sa.Column("provider_values", JsonType, nullable=False),
        sa.Column("note", sa.Text, nullable=True),
        sa.Column("resolved_at", UtcDateTime, nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.UniqueConstraint(
            "application_id",
            "provider",
            "kind",
            "subject",
            name="uq_reconciliation_findings_application_id_provider_kind_subject",
        ),
    )
    op.create_index(
        "ix_reconciliation_findings_application_id_day", "reconciliation_findings", ["application_id", "day"]
    )
    op.create_index("ix_checkouts_connector_id_created_at", "checkouts", ["connector_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_checkouts_connector_id_created_at", "checkouts")
    op.drop_table("reconciliation_findings")
    op.drop_table("reconciliation_runs")
