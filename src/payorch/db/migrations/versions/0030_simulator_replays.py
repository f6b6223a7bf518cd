"""One replay store for every simulated provider (payorch.simulator.replays): the first answer
under a request's key, by provider. Provider C's kept answers move into it; provider B's refunds
no longer carry their X-Idempotency-Key (the store keeps the refund's answer instead), so a B
refund made before this upgrade is not replayed after it (sandbox data, kept a day for the
public owner)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0030"
down_revision = "0029"

_MOVE_C_UP = (
    "INSERT INTO simulator_replays (provider, owner, key, fingerprint, status_code, body, created_at) "
    "SELECT 'provider_c', owner, key, fingerprint, status_code, body, created_at FROM simulator_c_idempotency"
)
_MOVE_C_DOWN = (
    "INSERT INTO simulator_c_idempotency (owner, key, fingerprint, status_code, body, created_at) "
    "SELECT owner, key, fingerprint, status_code, body, created_at FROM simulator_replays "
    "WHERE provider = 'provider_c'"
)


def _kept_answers() -> list[sa.Column[object]]:
    """The columns C's table had and the shared one keeps (after its ``provider``)."""
    return [
        sa.Column("owner", sa.String(40), primary_key=True),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("status_code", sa.Integer, nullable=False),
        sa.Column("body", JsonType, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "simulator_replays", sa.Column("provider", sa.String(40), primary_key=True), *_kept_answers()
    )
    op.create_index("ix_simulator_replays_owner_created_at", "simulator_replays", ["owner", "created_at"])
    op.execute(_MOVE_C_UP)
    op.drop_table("simulator_c_idempotency")
    with op.batch_alter_table("simulator_b_refunds") as batch:
        batch.drop_constraint("uq_simulator_b_refunds_owner_key", type_="unique")
        batch.drop_column("idempotency_key")


def downgrade() -> None:
    with op.batch_alter_table("simulator_b_refunds") as batch:
        batch.add_column(sa.Column("idempotency_key", sa.String(255), nullable=True))
        batch.create_unique_constraint("uq_simulator_b_refunds_owner_key", ["owner", "idempotency_key"])
    op.create_table("simulator_c_idempotency", *_kept_answers())
    op.execute(_MOVE_C_DOWN)
    op.drop_index("ix_simulator_replays_owner_created_at", "simulator_replays")
    op.drop_table("simulator_replays")
