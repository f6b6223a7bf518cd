"""Webhook endpoints, deliveries, delivery attempts (issue: webhooks)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column(
            "application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False
        ),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("events", JsonType, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("secret_encrypted", sa.Text, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_webhook_endpoints_application_id_id", "webhook_endpoints", ["application_id", "id"]
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column(
            "application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False
        ),
        sa.Column(
            "endpoint_id",
            sa.String(40),
            sa.ForeignKey("webhook_endpoints.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("event_id", sa.String(40), sa.ForeignKey("events.id"), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("schedule_attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", UtcDateTime, nullable=True),
        sa.Column("leased_until", UtcDateTime, nullable=True),
        sa.Column("lease_token", sa.String(32), nullable=True),
        sa.Column("last_attempt_at", UtcDateTime, nullable=True),
        sa.Column("response_status", sa.Integer, nullable=True),
        sa.Column("response_excerpt", sa.Text, nullable=True),
        sa.Column("error", sa.String(64), nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_webhook_deliveries_status_next_attempt_at",
        "webhook_deliveries",
        ["status", "next_attempt_at"],
    )
    op.create_index(
        "ix_webhook_deliveries_endpoint_id_id", "webhook_deliveries", ["endpoint_id", "id"]
    )
    op.create_index("ix_webhook_deliveries_event_id", "webhook_deliveries", ["event_id"])
    op.create_table(
        "webhook_delivery_attempts",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column(
            "delivery_id",
            sa.String(40),
            sa.ForeignKey("webhook_deliveries.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("started_at", UtcDateTime, nullable=False),
        sa.Column("duration_ms", sa.Integer, nullable=False),
        sa.Column("response_status", sa.Integer, nullable=True),
        sa.Column("response_excerpt", sa.Text, nullable=True),
        sa.Column("error", sa.String(64), nullable=True),
    )
    op.create_index(
        "ix_webhook_delivery_attempts_delivery_id_seq",
        "webhook_delivery_attempts",
        ["delivery_id", "seq"],
    )


def downgrade() -> None:
    op.drop_table("webhook_delivery_attempts")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_endpoints")
