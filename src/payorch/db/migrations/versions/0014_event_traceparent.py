"""An event keeps the trace context (W3C traceparent) of the span that wrote it, so the spans of
its webhook attempts continue the trace of the request that caused it
(payorch/observability/tracing.py). Null while tracing is off, and for every older event."""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    # Nullable and without a default: PostgreSQL adds it without rewriting the table.
    op.add_column("events", sa.Column("traceparent", sa.String(55), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.drop_column("traceparent")
