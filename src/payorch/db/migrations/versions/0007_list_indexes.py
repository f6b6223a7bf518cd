"""Indexes of the lists: payment intents by status, merchant account and external reference, and
the application's webhook deliveries (optionally by status), each ending with the id so a
keyset page (``id < cursor ORDER BY id DESC``) is one index probe however long the list.
"""

from alembic import op

revision = "0007"
down_revision = "0006"

INDEXES = (
    (
        "ix_payment_intents_application_id_status_id",
        "payment_intents",
        ["application_id", "status", "id"],
    ),
    (
        "ix_payment_intents_application_id_merchant_account_id_id",
        "payment_intents",
        ["application_id", "merchant_account_id", "id"],
    ),
    (
        "ix_payment_intents_application_id_external_reference_id",
        "payment_intents",
        ["application_id", "external_reference", "id"],
    ),
    ("ix_webhook_deliveries_application_id_id", "webhook_deliveries", ["application_id", "id"]),
    (
        "ix_webhook_deliveries_application_id_status_id",
        "webhook_deliveries",
        ["application_id", "status", "id"],
    ),
)


def upgrade() -> None:
    for name, table, columns in INDEXES:
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, table, _ in reversed(INDEXES):
        op.drop_index(name, table_name=table)
