"""Why an intent's payment did not go through: ``payment_intents.last_payment_error``, the
provider's answer in payorch's shape (code, message, provider, provider_code, provider_message,
at; docs/api.md, "Why a payment failed"). NULL until a provider ends a payment without paying."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType

revision = "0021"
down_revision = "0020"


def upgrade() -> None:
    op.add_column("payment_intents", sa.Column("last_payment_error", JsonType, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("payment_intents") as batch:
        batch.drop_column("last_payment_error")
