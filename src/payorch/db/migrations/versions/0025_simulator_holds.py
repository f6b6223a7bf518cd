"""The simulator holds (issue 39): provider A's deferred-capture transactions (made with a
deferred commerce code, captured once, lapsing at capture_before) and provider C's manual-capture
Checkout Sessions and PaymentIntents (amount_capturable until capture_before, canceled with a
reason). docs/simulator.md, "Holds"."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import UtcDateTime

revision = "0025"
down_revision = "0024"


def upgrade() -> None:
    with op.batch_alter_table("simulator_a_transactions") as batch:
        batch.add_column(sa.Column("deferred", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("captured_amount", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("captured_at", UtcDateTime, nullable=True))
        batch.add_column(sa.Column("capture_before", UtcDateTime, nullable=True))
    with op.batch_alter_table("simulator_c_sessions") as batch:
        batch.add_column(
            sa.Column("capture_method", sa.String(16), nullable=False, server_default="automatic")
        )
    with op.batch_alter_table("simulator_c_payment_intents") as batch:
        batch.add_column(
            sa.Column("capture_method", sa.String(16), nullable=False, server_default="automatic")
        )
        batch.add_column(sa.Column("amount_capturable", sa.BigInteger, nullable=False, server_default="0"))
        batch.add_column(sa.Column("capture_before", UtcDateTime, nullable=True))
        batch.add_column(sa.Column("canceled_at", UtcDateTime, nullable=True))
        batch.add_column(sa.Column("cancellation_reason", sa.String(32), nullable=True))
    # The defaults fill the rows there are; the service always writes these columns.
    with op.batch_alter_table("simulator_a_transactions") as batch:
        batch.alter_column("deferred", existing_type=sa.Boolean, server_default=None)
    with op.batch_alter_table("simulator_c_sessions") as batch:
        batch.alter_column("capture_method", existing_type=sa.String(16), server_default=None)
    with op.batch_alter_table("simulator_c_payment_intents") as batch:
        batch.alter_column("capture_method", existing_type=sa.String(16), server_default=None)
        batch.alter_column("amount_capturable", existing_type=sa.BigInteger, server_default=None)
    op.create_index(
        "ix_simulator_c_payment_intents_status_capture_before",
        "simulator_c_payment_intents",
        ["status", "capture_before"],
    )


def downgrade() -> None:
    op.drop_index("ix_simulator_c_payment_intents_status_capture_before", "simulator_c_payment_intents")
    with op.batch_alter_table("simulator_c_payment_intents") as batch:
        for column in (
            "cancellation_reason",
            "canceled_at",
            "capture_before",
            "amount_capturable",
            "capture_method",
        ):
            batch.drop_column(column)
    with op.batch_alter_table("simulator_c_sessions") as batch:
        batch.drop_column("capture_method")
    with op.batch_alter_table("simulator_a_transactions") as batch:
        for column in ("capture_before", "captured_at", "captured_amount", "deferred"):
            batch.drop_column(column)
