"""Disputes move only forward in the provider's order (issue 37): the provider's id of the
dispute the payment's summary describes, and the order key of the newest observation applied
(the provider's time, and the state's rank within its dispute's life). payorch.payments.disputes."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0023"
down_revision = "0022"


def upgrade() -> None:
    op.add_column("payments", sa.Column("dispute_reference", sa.String(255), nullable=True))
    op.add_column("payments", sa.Column("dispute_observed_at", UtcDateTime, nullable=True))
    op.add_column("payments", sa.Column("dispute_rank", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        for column in ("dispute_rank", "dispute_observed_at", "dispute_reference"):
            batch.drop_column(column)
