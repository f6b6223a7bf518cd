"""Simulated provider C's disputes (chargebacks) on paid PaymentIntents
(payorch.simulator.provider_c.tables.simulator_c_disputes)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    op.create_table(
        "simulator_c_disputes",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("owner", sa.String(40), nullable=False),
        sa.Column("payment_intent_id", sa.String(40), nullable=False),
        sa.Column("charge", sa.String(40), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    )
    op.create_index(
        "ix_simulator_c_disputes_payment_intent_id", "simulator_c_disputes", ["payment_intent_id"]
    )


def downgrade() -> None:
    op.drop_table("simulator_c_disputes")
