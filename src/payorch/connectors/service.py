"""Connector rules: which providers a merchant uses, in which mode, with which credentials.

Credentials are validated per provider, encrypted at rest (runtime.cipher) and never returned;
the application's environment decides which modes are allowed (docs/api.md, Connectors).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import repository as applications
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.connectors import repository
from payorch.connectors.repository import DuplicateConnector
from payorch.connectors.schemas import (
    CREDENTIAL_FIELDS,
    CreateConnector,
    Mode,
    UpdateConnector,
    connector_body,
)
from payorch.crypto import Cipher
from payorch.errors import (
    ConnectorConfigAlreadyExists,
    Forbidden,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.ids import new_id
from payorch.providers import PROVIDER_A, PROVIDER_B, PROVIDER_IDS

MOCK_PRIORITIES = ((PROVIDER_A, 1), (PROVIDER_B, 2))


async def list_connectors(
    conn: AsyncConnection, caller: Caller, merchant_id: str
) -> dict[str, Any]:
    await _check_merchant(conn, caller, merchant_id)
    return {
        "items": [connector_body(row) for row in await repository.for_merchant(conn, merchant_id)]
    }


async def create_connector(
    conn: AsyncConnection,
    clock: Clock,
    cipher: Cipher,
    caller: Caller,
    merchant_id: str,
    request: CreateConnector,
) -> dict[str, Any]:
    await _check_merchant(conn, caller, merchant_id)
    if request.provider not in PROVIDER_IDS:
        raise ValidationFailed.field("provider", f"must be one of {', '.join(PROVIDER_IDS)}")
    mode = Mode(request.mode)
    check_mode_allowed(caller.environment, mode)
    credentials = None
    if request.credentials is not None:
        credentials = check_credentials(request.provider, request.credentials)
    elif mode is not Mode.MOCK:
        raise ValidationFailed.field("credentials", f"required for {mode.value} mode")
    now = clock.now()
    values = {
        "id": new_id("cfg"),
        "application_id": caller.application_id,
        "merchant_account_id": merchant_id,
        "provider": request.provider,
        "mode": mode.value,
        "enabled": request.enabled,
        "priority": request.priority,
        "credentials": encrypt_credentials(cipher, credentials),
        "created_at": now,
        "updated_at": now,
    }
    try:
        await repository.insert_connector(conn, **values)
    except DuplicateConnector:
        raise ConnectorConfigAlreadyExists() from None
    return connector_body(_Values(values))


async def update_connector(
    conn: AsyncConnection,
    clock: Clock,
    cipher: Cipher,
    caller: Caller,
    merchant_id: str,
    connector_id: str,
    request: UpdateConnector,
) -> dict[str, Any]:
    await _check_merchant(conn, caller, merchant_id)
    row = await repository.get(conn, caller.application_id, merchant_id, connector_id)
    if row is None:
        raise ResourceNotFound(f"No connector {connector_id}.")
    changes: dict[str, Any] = {}
    for name in ("mode", "enabled", "priority", "credentials"):
        if name in request.model_fields_set and getattr(request, name) is None:
            raise ValidationFailed.field(name, "must not be null")
    mode = Mode(request.mode or row.mode)
    if request.mode is not None:
        check_mode_allowed(caller.environment, mode)
        changes["mode"] = mode.value
    if request.credentials is not None:
        changes["credentials"] = encrypt_credentials(
            cipher, check_credentials(row.provider, request.credentials)
        )
    has_credentials = row.credentials is not None or "credentials" in changes
    if mode is not Mode.MOCK and not has_credentials:
        raise ValidationFailed.field("credentials", f"required for {mode.value} mode")
    if request.enabled is not None:
        changes["enabled"] = request.enabled
    if request.priority is not None:
        changes["priority"] = request.priority
    changes["updated_at"] = clock.now()
    await repository.update_connector(conn, connector_id, **changes)
    values = {name: getattr(row, name) for name in row._fields}
    values.update(changes)
    return connector_body(_Values(values))


async def add_mock_connectors(
    conn: AsyncConnection, clock: Clock, merchant_account_id: str
) -> None:
    """MOCK configurations for both providers: A priority 1, B priority 2 (sandbox start)."""
    application_id = await repository.application_of_merchant(conn, merchant_account_id)
    if application_id is None:
        raise ValueError(f"no merchant account {merchant_account_id}")
    now = clock.now()
    for provider, priority in MOCK_PRIORITIES:
        await repository.insert_connector(
            conn,
            id=new_id("cfg"),
            application_id=application_id,
            merchant_account_id=merchant_account_id,
            provider=provider,
            mode=Mode.MOCK.value,
            enabled=True,
            priority=priority,
            credentials=None,
            created_at=now,
            updated_at=now,
        )


def check_mode_allowed(environment: str, mode: Mode) -> None:
    if mode is Mode.MOCK and environment != "SANDBOX":
        raise Forbidden("MOCK mode is only for SANDBOX applications.")
    if mode is Mode.PRODUCTION and environment != "PRODUCTION":
        raise Forbidden("PRODUCTION mode is only for PRODUCTION applications.")


def check_credentials(provider: str, credentials: dict[str, str]) -> dict[str, str]:
    expected = CREDENTIAL_FIELDS[provider]
    for name in credentials:
        if name not in expected:
            raise ValidationFailed.field(f"credentials.{name}", f"Unknown field for {provider}.")
    for name in expected:
        if not credentials.get(name):
            raise ValidationFailed.field(f"credentials.{name}", "Field required.")
    return {name: credentials[name] for name in expected}


def encrypt_credentials(cipher: Cipher, credentials: dict[str, str] | None) -> str | None:
    if credentials is None:
        return None
    return cipher.encrypt(json.dumps(credentials, sort_keys=True))


def decrypt_credentials(cipher: Cipher, connector: Row) -> dict[str, str] | None:  # type: ignore[type-arg]
    if connector.credentials is None:
        return None
    data: dict[str, str] = json.loads(cipher.decrypt(connector.credentials))
    return data


async def _check_merchant(conn: AsyncConnection, caller: Caller, merchant_id: str) -> None:
    if not await applications.merchant_belongs_to(conn, merchant_id, caller.application_id):
        raise ResourceNotFound(f"No merchant account {merchant_id}.")


class _Values:
    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)
