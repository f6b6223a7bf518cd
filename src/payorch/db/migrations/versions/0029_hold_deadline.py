"""A hold nobody captured (issue 39): when payment.capture_due was sent, when the deadline check
asks the provider again, and an index to find holds coming due."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0029"
down_revision = "0028"


def upgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.add_column(sa.Column("capture_due_at", UtcDateTime, nullable=True))
        batch.add_column(sa.Column("hold_check_at", UtcDateTime, nullable=True))
        batch.create_index("ix_payments_status_capture_before", ["status", "capture_before"])


def downgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.drop_index("ix_payments_status_capture_before")
        batch.drop_column("hold_check_at")
        batch.drop_column("capture_due_at")
