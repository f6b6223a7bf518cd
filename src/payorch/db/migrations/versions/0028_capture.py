"""Hold now, charge later (issue 39): an intent's capture_method, and a payment's hold (what was
captured and released, its deadline, a capture or void in flight)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0028"
down_revision = "0027"


def upgrade() -> None:
    with op.batch_alter_table("payment_intents") as batch:
        batch.add_column(
            sa.Column("capture_method", sa.String(16), nullable=False, server_default="automatic")
        )
    with op.batch_alter_table("payments") as batch:
        batch.add_column(
            sa.Column("capture_method", sa.String(16), nullable=False, server_default="automatic")
        )
        batch.add_column(sa.Column("amount_captured", sa.BigInteger, nullable=False, server_default="0"))
        batch.add_column(sa.Column("amount_released", sa.BigInteger, nullable=False, server_default="0"))
        batch.add_column(sa.Column("capture_before", UtcDateTime, nullable=True))
        batch.add_column(sa.Column("captured_at", UtcDateTime, nullable=True))
        batch.add_column(sa.Column("hold_action", sa.String(16), nullable=True))
        batch.add_column(sa.Column("hold_action_amount", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("hold_action_check_at", UtcDateTime, nullable=True))
        batch.create_index("ix_payments_hold_action_check_at", ["hold_action_check_at"])
    # Every payment before holds was captured whole when authorized.
    op.execute("UPDATE payments SET amount_captured = amount, captured_at = authorized_at")


def downgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.drop_index("ix_payments_hold_action_check_at")
        for name in (
            "hold_action_check_at",
            "hold_action_amount",
            "hold_action",
            "captured_at",
            "capture_before",
            "amount_released",
            "amount_captured",
            "capture_method",
        ):
            batch.drop_column(name)
    with op.batch_alter_table("payment_intents") as batch:
        batch.drop_column("capture_method")
