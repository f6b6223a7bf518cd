"""Operator actions run outside a request: create an application, first-start sandbox."""

from __future__ import annotations

from payorch.applications import service as applications_service
from payorch.applications.service import CreatedApplication
from payorch.applications.service import create_application as create_in_transaction
from payorch.clock import SystemClock
from payorch.config import Settings
from payorch.db import Database


async def create_application(
    settings: Settings,
    *,
    name: str,
    environment: str,
    merchant_name: str | None,
    mock_connectors: bool,
) -> CreatedApplication:
    database = Database(settings.database_url)
    try:
        async with database.transaction() as conn:
            created = await create_in_transaction(
                conn, SystemClock(), name=name, environment=environment, merchant_name=merchant_name
            )
            if mock_connectors:
                from payorch.connectors.service import add_mock_connectors

                await add_mock_connectors(
                    conn,
                    SystemClock(),
                    application_id=created.application_id,
                    merchant_account_id=created.merchant_account_id,
                )
            return created
    finally:
        await database.dispose()


async def bootstrap_sandbox(settings: Settings) -> None:
    """On an empty embedded database, create a sandbox application and print its key once."""
    if not settings.is_sqlite:
        return
    database = Database(settings.database_url)
    try:
        async with database.transaction() as conn:
            if await applications_service.count_applications(conn) > 0:
                return
    finally:
        await database.dispose()
    created = await create_application(
        settings, name="Sandbox", environment="SANDBOX", merchant_name="Sandbox shop", mock_connectors=True
    )
    print(
        "\n".join(
            [
                "",
                "payorch: created a sandbox application (shown once; keep the key):",
                f"  API key:             {created.api_key}",
                f"  merchant_account_id: {created.merchant_account_id}",
                "  try:",
                f"  curl -s {settings.public_url}/v1/payment-intents \\",
                f"    -H 'Authorization: Bearer {created.api_key}' \\",
                "    -H 'Content-Type: application/json' -H 'Idempotency-Key: first-try' \\",
                f"    -d '{{\"merchant_account_id\": \"{created.merchant_account_id}\", "
                '"external_reference": "order-1", "amount": 1000, "currency": "CLP", '
                '"return_url": "http://127.0.0.1:3000/return"}\'',
                "",
            ]
        ),
        flush=True,
    )
