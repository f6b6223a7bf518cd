"""The create's gate: an intent may name a provider only if the merchant has it enabled, it
can charge the intent's currency and, for capture_method manual, hold the money (else 422
CONNECTOR_NOT_CONFIGURED, CURRENCY_NOT_SUPPORTED or CAPTURE_METHOD_NOT_SUPPORTED, nothing written).

The enabled check is one SQL text, used both as a fragment of the PostgreSQL one-statement
create (intents/create_at_once.py) and alone by the full path (SQLite, a retry): a row when
the requested provider is ``auto`` or enabled for the merchant. The currency check needs no
database and runs before either.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.one_statement import Fragment
from payorch.errors import ConnectorNotConfigured, CurrencyNotSupported
from payorch.providers import AUTO
from payorch.routing.currencies import can_take, charges, check_capture_method, currencies_of

_ENABLED_SQL = (
    f"SELECT 1 WHERE CAST(:intent_requested_provider AS TEXT) = '{AUTO}' OR EXISTS (SELECT 1 FROM"  # noqa: S608 - a constant
    " connectors WHERE merchant_account_id = CAST(:intent_merchant_account_id AS TEXT)"
    " AND provider = CAST(:intent_requested_provider AS TEXT) AND enabled)"
)
PROVIDER_ENABLED_FRAGMENT = Fragment("provider_enabled", _ENABLED_SQL)
_ENABLED = text(_ENABLED_SQL)


def currency_ok(requested: str, currency: str) -> bool:
    """Whether the requested provider (``auto``: any) can charge ``currency``."""
    return requested == AUTO or charges(requested, currency)


def check_currency(requested: str, currency: str) -> None:
    if not currency_ok(requested, currency):
        raise CurrencyNotSupported(requested, currency, sorted(currencies_of(requested)))


def holds_ok(requested: str, capture_method: str) -> bool:
    """Whether the requested provider (``auto``: any) can take the intent's capture method."""
    return requested == AUTO or can_take(requested, capture_method)


def check_holds(requested: str, capture_method: str) -> None:
    """A manual intent may name only a provider that can hold (``auto`` chooses among them)."""
    if requested != AUTO:
        check_capture_method(requested, capture_method)


async def check_enabled(conn: AsyncConnection, merchant_account_id: str, requested: str) -> None:
    parameters = {"intent_requested_provider": requested, "intent_merchant_account_id": merchant_account_id}
    if (await conn.execute(_ENABLED, parameters)).first() is None:
        raise ConnectorNotConfigured(f"The provider {requested} is not enabled for this merchant.")
