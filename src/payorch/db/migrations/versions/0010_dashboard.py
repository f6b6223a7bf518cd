"""The dashboard's sign-in sessions (issue: a dashboard)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    op.create_table(
        "dashboard_sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column("credential_id", sa.String(40), sa.ForeignKey("api_credentials.id"), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("expires_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_dashboard_sessions_credential_id", "dashboard_sessions", ["credential_id"])
    op.create_index("ix_dashboard_sessions_expires_at", "dashboard_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_table("dashboard_sessions")
