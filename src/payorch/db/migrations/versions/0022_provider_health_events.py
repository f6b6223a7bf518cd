"""Provider health history (payorch.db.tables.routing.provider_health_events): each transition
of a health key (skipped, available again) and provider call failures counted per minute, for
the dashboard's routing page. Rows older than two days are purged as new ones are written
(payorch.routing.health_history)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0022"
down_revision = "0021"


def upgrade() -> None:
    op.create_table(
        "provider_health_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("health_key", sa.String(200), nullable=False),
        sa.Column("application_id", sa.String(40), nullable=True),
        sa.Column("connector_id", sa.String(40), nullable=True),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_provider_health_events_health_key_at", "provider_health_events", ["health_key", "at"])
    op.create_index(
        "ix_provider_health_events_connector_id_at", "provider_health_events", ["connector_id", "at"]
    )
    op.create_index("ix_provider_health_events_at", "provider_health_events", ["at"])


def downgrade() -> None:
    op.drop_table("provider_health_events")
