"""The simulated market: per application and simulated provider, the probabilities with which
the simulator's buyer approves, is declined, gives up or leaves a payment in process
(payorch.db.tables.simulator.simulator_markets)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    op.create_table(
        "simulator_markets",
        sa.Column("owner", sa.String(40), primary_key=True),
        sa.Column("provider", sa.String(40), primary_key=True),
        sa.Column("approve", sa.Float, nullable=False),
        sa.Column("decline", sa.Float, nullable=False),
        sa.Column("give_up", sa.Float, nullable=False),
        sa.Column("pending", sa.Float, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("simulator_markets")
