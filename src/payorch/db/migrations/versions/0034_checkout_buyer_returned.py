"""checkouts.buyer_returned_at: when the buyer came back through the checkout's return and the
provider confirmed the return was this checkout's, for a provider whose refusal leaves its
session payable (its later word on the refusal then ends the checkout)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0034"
down_revision = "0033"


def upgrade() -> None:
    op.add_column("checkouts", sa.Column("buyer_returned_at", UtcDateTime, nullable=True))


def downgrade() -> None:
    op.drop_column("checkouts", "buyer_returned_at")
