"""Provider C's simulated PaymentIntents and refunds listed by created time a page at a time
(reconciliation reads a day): an index per owner and time, as its sessions have. Without it
each page sorted the owner's rows (docs/performance.md, "Reconciling a day")."""

from alembic import op

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    op.create_index(
        "ix_simulator_c_payment_intents_owner_created_at",
        "simulator_c_payment_intents",
        ["owner", "created_at"],
    )
    op.create_index("ix_simulator_c_refunds_owner_created_at", "simulator_c_refunds", ["owner", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_simulator_c_refunds_owner_created_at", "simulator_c_refunds")
    op.drop_index("ix_simulator_c_payment_intents_owner_created_at", "simulator_c_payment_intents")
