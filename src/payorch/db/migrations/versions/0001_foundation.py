"""Foundation: applications, merchant accounts, API credentials, payment intents, events,
idempotency records.
"""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "applications",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("environment", sa.String(16), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_table(
        "merchant_accounts",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_merchant_accounts_application_id", "merchant_accounts", ["application_id"])
    op.create_table(
        "api_credentials",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("prefix", sa.String(32), nullable=False, unique=True),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("revoked_at", UtcDateTime, nullable=True),
    )
    op.create_index("ix_api_credentials_application_id", "api_credentials", ["application_id"])
    op.create_table(
        "payment_intents",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column(
            "merchant_account_id", sa.String(40), sa.ForeignKey("merchant_accounts.id"), nullable=False
        ),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("external_reference", sa.String(64), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("description", sa.String(255), nullable=True),
        sa.Column("requested_provider", sa.String(64), nullable=False),
        sa.Column("provider", sa.String(64), nullable=True),
        sa.Column("return_url", sa.Text, nullable=False),
        sa.Column("metadata", JsonType, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_payment_intents_application_id_id", "payment_intents", ["application_id", "id"]
    )
    op.create_table(
        "events",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("id", sa.String(40), nullable=False, unique=True),
        sa.Column("application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("payment_intent_id", sa.String(40), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_events_application_id_seq", "events", ["application_id", "seq"])
    op.create_index("ix_events_payment_intent_id_seq", "events", ["payment_intent_id", "seq"])
    op.create_table(
        "idempotency_records",
        sa.Column("application_id", sa.String(40), primary_key=True),
        sa.Column("operation", sa.String(300), primary_key=True),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("locked_until", UtcDateTime, nullable=False),
        sa.Column("response_status", sa.Integer, nullable=True),
        sa.Column("response_body", sa.Text, nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("expires_at", UtcDateTime, nullable=False),
    )
    op.create_index("ix_idempotency_records_expires_at", "idempotency_records", ["expires_at"])


def downgrade() -> None:
    for table in (
        "idempotency_records",
        "events",
        "payment_intents",
        "api_credentials",
        "merchant_accounts",
        "applications",
    ):
        op.drop_table(table)
