"""All tables, one module per domain, on one MetaData (Alembic migrations mirror them).

Import tables from their domain module (``from payorch.db.tables.providers import payments``).
"""

from payorch.db.tables import (  # noqa: F401
    activity,
    dashboard,
    links,
    people,
    provider_words,
    providers,
    reconciliation,
    refunds,
    routing,
    simulator,
    webhooks,
)
from payorch.db.tables.base import metadata
from payorch.db.tables.foundation import (
    api_credentials,
    applications,
    events,
    idempotency_records,
    merchant_accounts,
    payment_intents,
)

__all__ = [
    "metadata",
    "applications",
    "merchant_accounts",
    "api_credentials",
    "payment_intents",
    "events",
    "idempotency_records",
]
