"""provider_words: a provider's verified notification items kept as its word, for a provider
whose signed notification is the only place it says an outcome (providers/words.py)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0032"
down_revision = "0031"


def upgrade() -> None:
    op.create_table(
        "provider_words",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("connector_id", sa.String(40), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("event", sa.String(64), nullable=False),
        sa.Column("reference", sa.String(128), nullable=False),
        sa.Column("success", sa.Boolean, nullable=False),
        sa.Column("original_reference", sa.String(128), nullable=True),
        sa.Column("merchant_reference", sa.String(255), nullable=True),
        sa.Column("amount", sa.BigInteger, nullable=True),
        sa.Column("currency", sa.String(3), nullable=True),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("event_at", UtcDateTime, nullable=True),
        sa.Column("recorded_at", UtcDateTime, nullable=False),
        sa.UniqueConstraint(
            "connector_id", "reference", "event", "success",
            name="uq_provider_words_connector_id_reference_event_success",
        ),
    )
    op.create_index(
        "ix_provider_words_connector_id_original_reference",
        "provider_words",
        ["connector_id", "original_reference"],
    )
    op.create_index(
        "ix_provider_words_connector_id_merchant_reference",
        "provider_words",
        ["connector_id", "merchant_reference"],
    )


def downgrade() -> None:
    op.drop_table("provider_words")
