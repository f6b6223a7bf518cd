"""Refunds and payment listing indexes (issue: refunds).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa  # noqa: F401
from alembic import op  # noqa: F401

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
