"""Operator actions run outside a request: create an application, first-start sandbox, and the
Phases the operator's commands run their transactions with (admin_cli.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from payorch.applications import service as applications_service
from payorch.applications.service import ApplicationSummary, CreatedApplication
from payorch.applications.service import create_application as create_in_transaction
from payorch.clock import SystemClock
from payorch.config import Settings
from payorch.db import Database, Phases
from payorch.invocation import invoked_as

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


@asynccontextmanager
async def operator_phases(settings: Settings) -> AsyncIterator[Phases]:
    """One command's database: each of its steps is a phase (the transaction rule)."""
    database = Database(settings.database_url, transaction_pooling=settings.database_transaction_pooling)
    try:
        yield Phases(database)
    finally:
        await database.dispose()


@dataclass(frozen=True)
class NewApplication:
    created: CreatedApplication
    owner_invite_url: str | None  # with an owner's email: their invite URL (shown once)


async def create_application(
    settings: Settings,
    *,
    name: str,
    environment: str,
    merchant_name: str | None,
    mock_connectors: bool,
    owner_email: str | None = None,
) -> NewApplication:
    """The application, its merchant account, first key and (``owner_email``) its owner, invited
    in the same transaction: a refused email creates nothing."""
    database = Database(settings.database_url, transaction_pooling=settings.database_transaction_pooling)
    try:
        async with database.transaction() as conn:
            created = await create_in_transaction(
                conn, SystemClock(), name=name, environment=environment, merchant_name=merchant_name
            )
            invite_url = None
            if owner_email is not None:
                invite_url = await _invite_owner(settings, conn, created, owner_email)
            if mock_connectors:
                from payorch.connectors.service import add_mock_connectors

                await add_mock_connectors(
                    conn,
                    SystemClock(),
                    application_id=created.application_id,
                    merchant_account_id=created.merchant_account_id,
                )
            return NewApplication(created, invite_url)
    finally:
        await database.dispose()


async def _invite_owner(
    settings: Settings, conn: AsyncConnection, created: CreatedApplication, email: str
) -> str:
    from payorch.auth.service import OPERATOR, Caller
    from payorch.users import invites
    from payorch.users import service as users_service

    caller = Caller(created.application_id, created.environment, OPERATOR)
    _, token = await users_service.invite(
        conn, SystemClock(), caller, email, "owner", limit=settings.max_users
    )
    return invites.invite_url(settings.public_url, token)


async def bootstrap_sandbox(settings: Settings) -> None:
    """On an empty embedded database, create a sandbox application and print its key once; on a
    database that has one already, say where the service is (PAYORCH_PUBLIC_URL, which serve
    derives from --host and --port when unset) and how to get a new key.

    In production (PAYORCH_SIMULATOR_ENABLED=false, docs/deployment.md) nothing of the sandbox
    is created or suggested: only where the service is, and with no application yet how to
    create a PRODUCTION one."""
    url = settings.public_url
    async with operator_phases(settings) as phases, phases.reading() as conn:
        listed = await applications_service.list_applications(conn)
    production = not settings.simulator_enabled
    if listed:
        sandbox = next((s for s in listed if s.application.environment == "SANDBOX"), None)
        print(_existing(url, sandbox, production=production), flush=True)
        return
    if production or not settings.is_sqlite:
        print(f"payorch: serving at {url}; no application yet: {_create_hint(production)}", flush=True)
        return
    new = await create_application(
        settings,
        name="Sandbox",
        environment="SANDBOX",
        merchant_name="Sandbox shop",
        mock_connectors=True,
        owner_email=settings.sandbox_owner_email,
    )
    created = new.created
    print(
        "\n".join(
            [
                "",
                "payorch: created a sandbox application (shown once; keep the key):",
                f"  API key:             {created.api_key}",
                f"  merchant_account_id: {created.merchant_account_id}",
                f"  sign in to the dashboard as its owner, {settings.sandbox_owner_email} (the link"
                " sets the password; it works once, for 72 hours):",
                f"  {new.owner_invite_url}",
                "  try:",
                f"  curl -s {settings.public_url}/v1/payment-intents \\",
                f"    -H 'Authorization: Bearer {created.api_key}' \\",
                "    -H 'Content-Type: application/json' -H 'Idempotency-Key: first-try' \\",
                f'    -d \'{{"merchant_account_id": "{created.merchant_account_id}", '
                '"external_reference": "order-1", "amount": 1000, "currency": "CLP", '
                '"return_url": "http://127.0.0.1:3000/return"}\'',
                "",
            ]
        ),
        flush=True,
    )


def _create_hint(production: bool = False) -> str:
    if production:
        return f"{invoked_as()} applications create --name NAME --environment PRODUCTION"
    return f"{invoked_as()} applications create --name NAME --environment SANDBOX --mock-connectors"


def _existing(url: str, sandbox: ApplicationSummary | None, *, production: bool) -> str:
    """The second start's message (its key was shown once, at the first start); in production
    only where the service is."""
    lines = ["", f"payorch: serving at {url} (API reference: {url}/docs)"]
    if production:
        return "\n".join([*lines, ""])
    if sandbox is None:
        lines.append(f"  no sandbox application; make one: {_create_hint()}")
    else:
        application_id = sandbox.application.id
        lines += [
            f"  sandbox application: {application_id}",
            f"  merchant_account_id: {', '.join(sandbox.merchant_account_ids)}",
            f"  a new key for it:    {invoked_as()} keys create --application {application_id}",
        ]
    return "\n".join([*lines, ""])
