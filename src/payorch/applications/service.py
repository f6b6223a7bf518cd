"""Create an application with its merchant account and first API key (the operator's CLI)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import repository
from payorch.auth import keys
from payorch.auth import repository as credentials
from payorch.clock import Clock
from payorch.ids import new_id

ENVIRONMENTS = ("SANDBOX", "PRODUCTION")


@dataclass(frozen=True)
class CreatedApplication:
    application_id: str
    merchant_account_id: str
    environment: str
    api_key: str


async def create_application(
    conn: AsyncConnection, clock: Clock, *, name: str, environment: str, merchant_name: str | None
) -> CreatedApplication:
    if environment not in ENVIRONMENTS:
        raise ValueError(f"environment must be one of {', '.join(ENVIRONMENTS)}")
    now = clock.now()
    application_id = new_id("app")
    merchant_id = new_id("mrc")
    await repository.insert_application(
        conn, application_id=application_id, name=name, environment=environment, at=now
    )
    await repository.insert_merchant(
        conn, merchant_id=merchant_id, application_id=application_id, name=merchant_name or name, at=now
    )
    key = keys.generate(environment)
    await credentials.insert_credential(
        conn,
        credential_id=new_id("key"),
        application_id=application_id,
        name="first key",
        prefix=key.prefix,
        secret_hash=key.secret_hash,
        created_at=now,
    )
    return CreatedApplication(application_id, merchant_id, environment, key.api_key)
