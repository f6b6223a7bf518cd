"""Connector rules: which providers a merchant uses, in which mode, with which credentials.

Credentials are validated per provider (each provider package declares its fields), encrypted
at rest (runtime.cipher) and never returned; the application's environment decides which modes
are allowed (docs/api.md, Connectors).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.service import record_by
from payorch.applications import service as applications
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.connectors import repository
from payorch.connectors.records import Connector
from payorch.connectors.repository import DuplicateConnector
from payorch.connectors.schemas import (
    ConnectorList,
    ConnectorResponse,
    CreateConnector,
    UpdateConnector,
)
from payorch.crypto import Cipher
from payorch.errors import (
    ConnectorConfigAlreadyExists,
    ConnectorNotConfigured,
    Forbidden,
    InvalidState,
    ResourceNotFound,
    ValidationFailed,
    validator_message,
)
from payorch.ids import new_id
from payorch.jsontypes import JsonObject
from payorch.providers.base import Mode
from payorch.providers.registry import PROVIDER_IDS, REGISTRATIONS, registration_of
from payorch.routing.order import by_priority

CONNECTOR = "connector"  # the activity log's resource type
SET, REPLACED = "set", "replaced"  # what the activity log says of credentials: never their value


async def list_connectors(conn: AsyncConnection, caller: Caller, merchant_id: str) -> ConnectorList:
    await _check_merchant(conn, caller, merchant_id)
    connectors = await merchant_connectors(conn, merchant_id)
    return ConnectorList(items=[ConnectorResponse.of(connector) for connector in connectors])


async def create_connector(
    conn: AsyncConnection,
    clock: Clock,
    cipher: Cipher,
    caller: Caller,
    merchant_id: str,
    request: CreateConnector,
) -> ConnectorResponse:
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
    connector = Connector(
        id=new_id("cfg"),
        application_id=caller.application_id,
        merchant_account_id=merchant_id,
        provider=request.provider,
        mode=mode,
        enabled=request.enabled,
        priority=request.priority,
        encrypted_credentials=encrypt_credentials(cipher, credentials),
        created_at=now,
        updated_at=now,
    )
    try:
        await repository.insert_connector(conn, connector)
    except DuplicateConnector:
        raise ConnectorConfigAlreadyExists() from None
    logged: JsonObject = {
        "merchant_account_id": merchant_id,
        "provider": connector.provider,
        "mode": mode.value,
        "enabled": connector.enabled,
        "priority": connector.priority,
    }
    if credentials is not None:
        logged["credentials"] = SET  # never their value
    await record_by(conn, clock, caller, "connector.created", (CONNECTOR, connector.id), logged)
    return ConnectorResponse.of(connector)


async def update_connector(
    conn: AsyncConnection,
    clock: Clock,
    cipher: Cipher,
    caller: Caller,
    merchant_id: str,
    connector_id: str,
    request: UpdateConnector,
) -> ConnectorResponse:
    await _check_merchant(conn, caller, merchant_id)
    connector = await repository.get(conn, caller.application_id, merchant_id, connector_id)
    if connector is None:
        raise ResourceNotFound(f"No connector {connector_id}.")
    for name in ("mode", "enabled", "priority", "credentials"):
        if name in request.model_fields_set and getattr(request, name) is None:
            raise ValidationFailed.field(name, "must not be null")
    mode = Mode(request.mode) if request.mode is not None else connector.mode
    if request.mode is not None:
        check_mode_allowed(caller.environment, mode)
    encrypted = None
    if request.credentials is not None:
        encrypted = encrypt_credentials(cipher, check_credentials(connector.provider, request.credentials))
    if mode is not Mode.MOCK and not (connector.has_credentials or encrypted is not None):
        raise ValidationFailed.field("credentials", f"required for {mode.value} mode")
    updated = replace(
        connector,
        mode=mode,
        enabled=request.enabled if request.enabled is not None else connector.enabled,
        priority=request.priority if request.priority is not None else connector.priority,
        encrypted_credentials=encrypted or connector.encrypted_credentials,
        updated_at=clock.now(),
    )
    await repository.update_connector(
        conn,
        connector_id,
        updated_at=updated.updated_at,
        mode=mode if request.mode is not None else None,
        enabled=request.enabled,
        priority=request.priority,
        encrypted_credentials=encrypted,
    )
    changed: JsonObject = {
        name: value
        for name, before, value in (
            ("mode", connector.mode.value, updated.mode.value),
            ("enabled", connector.enabled, updated.enabled),
            ("priority", connector.priority, updated.priority),
        )
        if before != value
    }
    if encrypted is not None:
        changed["credentials"] = REPLACED if connector.has_credentials else SET  # never their value
    if changed:  # a PATCH that changes nothing is no change
        await record_by(conn, clock, caller, "connector.updated", (CONNECTOR, connector_id), changed)
    return ConnectorResponse.of(updated)


async def remove_connector(
    conn: AsyncConnection, clock: Clock, caller: Caller, merchant_id: str, connector_id: str
) -> Connector:
    """Remove a configuration no checkout has used; one that was used can only be disabled
    (its payments' returns, notifications and refunds still go through it). Returns it."""
    await _check_merchant(conn, caller, merchant_id)
    # Locked first, then checked for checkouts in a statement of its own (a snapshot taken after
    # the lock): a checkout being recorded with it (connectors.hold_for_checkout) is seen.
    connector = await repository.get(conn, caller.application_id, merchant_id, connector_id, for_update=True)
    if connector is None:
        raise ResourceNotFound(f"No connector {connector_id}.")
    if not await repository.delete_unused(conn, connector_id):
        raise InvalidState(
            "USED",
            f"Connector {connector_id} has taken payments: disable it (enabled false) instead;"
            " its payments' refunds and notifications still use it.",
            allowed=(),
        )
    logged: JsonObject = {"merchant_account_id": merchant_id, "provider": connector.provider}
    await record_by(conn, clock, caller, "connector.removed", (CONNECTOR, connector_id), logged)
    return connector


async def hold_for_checkout(conn: AsyncConnection, connector: Connector) -> None:
    """In the transaction that records a checkout made with ``connector``: keep it from being
    removed until that commits; 422 CONNECTOR_NOT_CONFIGURED when it was removed meanwhile."""
    if not await repository.hold(conn, connector.id):
        raise ConnectorNotConfigured(
            f"The {connector.provider} configuration was removed while the checkout was being made;"
            " nothing was charged. Retry: the checkout goes where routing sends it now."
        )


async def add_mock_connectors(
    conn: AsyncConnection, clock: Clock, *, application_id: str, merchant_account_id: str
) -> None:
    """A MOCK configuration for every registered provider, at its registered priority (sandbox
    start: A 1, B 2)."""
    now = clock.now()
    for registration in REGISTRATIONS:
        await repository.insert_connector(
            conn,
            Connector(
                id=new_id("cfg"),
                application_id=application_id,
                merchant_account_id=merchant_account_id,
                provider=registration.provider_id,
                mode=Mode.MOCK,
                enabled=True,
                priority=registration.mock_priority,
                encrypted_credentials=None,
                created_at=now,
                updated_at=now,
            ),
        )


async def find_connector(conn: AsyncConnection, connector_id: str) -> Connector | None:
    """By id alone (returns, notifications, workers): other domains read connectors through here."""
    return await repository.get_any(conn, connector_id)


async def merchant_connectors(conn: AsyncConnection, merchant_account_id: str) -> list[Connector]:
    """The merchant's configurations, best priority first (routing, refunds, the dashboard)."""
    return by_priority(await repository.for_merchant(conn, merchant_account_id))


def check_mode_allowed(environment: str, mode: Mode) -> None:
    if mode is Mode.MOCK and environment != "SANDBOX":
        raise Forbidden("MOCK mode is only for SANDBOX applications.")
    if mode is Mode.PRODUCTION and environment != "PRODUCTION":
        raise Forbidden("PRODUCTION mode is only for PRODUCTION applications.")


def check_credentials(provider: str, credentials: Mapping[str, str]) -> dict[str, str]:
    """The credential fields the provider's model takes, and nothing else: each required one
    given, each value one the model accepts (a setting such as provider A's ``capture`` names
    what it takes); an optional one left out keeps its default."""
    model = registration_of(provider).credentials
    for name in credentials:
        if name not in model.model_fields:
            raise ValidationFailed.field(f"credentials.{name}", f"Unknown field for {provider}.")
    for name, field in model.model_fields.items():
        if field.is_required() and not credentials.get(name):
            raise ValidationFailed.field(f"credentials.{name}", "Field required.")
    try:
        model.model_validate(dict(credentials))
    except ValidationError as exc:
        # hide_input_in_errors: the messages never carry a value (it may be a secret).
        listed = [
            (f"credentials.{e['loc'][0]}", validator_message(e["msg"])) for e in exc.errors() if e["loc"]
        ]
        raise ValidationFailed.listing(listed) from None
    return {name: credentials[name] for name in model.model_fields if name in credentials}


def capture_methods_of(cipher: Cipher, connector: Connector) -> frozenset[str]:
    """The capture methods the connector takes (routing sends it no other intent): the
    provider's declaration, narrowed by the connector's own setting where the provider has one."""
    registration = registration_of(connector.provider)
    if registration.connector_capture_methods is None:
        return registration.capture_methods(connector.mode, None)
    return registration.capture_methods(connector.mode, decrypt_credentials(cipher, connector))


def encrypt_credentials(cipher: Cipher, credentials: Mapping[str, str] | None) -> str | None:
    if credentials is None:
        return None
    return cipher.encrypt(json.dumps(dict(credentials), sort_keys=True))


def decrypt_credentials(cipher: Cipher, connector: Connector) -> dict[str, str] | None:
    if connector.encrypted_credentials is None:
        return None
    data: dict[str, str] = json.loads(cipher.decrypt(connector.encrypted_credentials))
    return data


async def _check_merchant(conn: AsyncConnection, caller: Caller, merchant_id: str) -> None:
    if not await applications.merchant_belongs_to(conn, merchant_id, caller.application_id):
        raise ResourceNotFound(f"No merchant account {merchant_id}.")
