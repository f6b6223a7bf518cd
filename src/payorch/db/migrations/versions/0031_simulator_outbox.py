"""One notification outbox for every simulated provider (simulator/outbox): provider B's
notifications and provider C's events are copied into simulator_notifications. Every row (not
only the pending ones): C's resend control sends again what was delivered. Expand only: the two
old tables stay for the previous release's processes during a rolling upgrade (docs/deployment.md,
"Upgrading") and are dropped in a later release."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0031"
down_revision = "0030"


def upgrade() -> None:
    op.create_table(
        "simulator_notifications",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("subject", sa.String(80), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("body", JsonType, nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", UtcDateTime, nullable=False),
        sa.Column("last_error", sa.String(255), nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_simulator_notifications_status_next_attempt_at",
        "simulator_notifications",
        ["status", "next_attempt_at"],
    )
    op.create_index(
        "ix_simulator_notifications_provider_owner_subject",
        "simulator_notifications",
        ["provider", "owner", "subject"],
    )
    op.create_index(
        "ix_simulator_notifications_owner_created_at", "simulator_notifications", ["owner", "created_at"]
    )
    op.execute(
        "INSERT INTO simulator_notifications (id, provider, owner, subject, "
        "url, body, status, attempts, next_attempt_at, last_error, created_at) "
        "SELECT id, 'provider_b', owner, CAST(payment_id AS VARCHAR(80)), "
        "url, body, status, attempts, next_attempt_at, last_error, created_at "
        "FROM simulator_b_notifications"
    )
    op.execute(
        "INSERT INTO simulator_notifications (id, provider, owner, subject, "
        "url, body, status, attempts, next_attempt_at, last_error, created_at) "
        "SELECT id, 'provider_c', owner, session_id, "
        "url, body, status, attempts, next_attempt_at, last_error, created_at FROM simulator_c_events"
    )


def downgrade() -> None:
    # The old tables are still there (expand only): what the outbox wrote since goes back.
    op.execute(
        "INSERT INTO simulator_b_notifications (id, owner, payment_id, "
        "url, body, status, attempts, next_attempt_at, last_error, created_at) "
        "SELECT id, owner, CAST(subject AS BIGINT), "
        "url, body, status, attempts, next_attempt_at, last_error, created_at "
        "FROM simulator_notifications WHERE provider = 'provider_b' "
        "AND id NOT IN (SELECT id FROM simulator_b_notifications)"
    )
    op.execute(
        "INSERT INTO simulator_c_events (id, owner, session_id, "
        "url, body, status, attempts, next_attempt_at, last_error, created_at) "
        "SELECT id, owner, subject, "
        "url, body, status, attempts, next_attempt_at, last_error, created_at "
        "FROM simulator_notifications WHERE provider = 'provider_c' "
        "AND id NOT IN (SELECT id FROM simulator_c_events)"
    )
    op.drop_table("simulator_notifications")
