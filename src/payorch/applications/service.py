"""Applications and merchant accounts: create an application with its merchant account and
first API key (the operator's CLI), and the questions other domains ask about them.

Every function runs in the caller's transaction (``conn``) and never commits.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import repository
from payorch.applications.records import Application, MerchantAccount
from payorch.auth.issuing import issue_credential
from payorch.clock import Clock
from payorch.ids import new_id

ENVIRONMENTS = ("SANDBOX", "PRODUCTION")


@dataclass(frozen=True)
class ApplicationSummary:
    """An application and the ids of its merchant accounts (the operator's listing)."""

    application: Application
    merchant_account_ids: tuple[str, ...]


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
    application = Application(new_id("app"), name, environment, now)
    merchant = MerchantAccount(new_id("mrc"), application.id, merchant_name or name, now)
    await repository.insert_application(conn, application)
    await repository.insert_merchant(conn, merchant)
    first = await issue_credential(
        conn, application_id=application.id, environment=environment, name="first key", at=now
    )
    return CreatedApplication(application.id, merchant.id, environment, first.api_key)


async def merchant_belongs_to(conn: AsyncConnection, merchant_id: str, application_id: str) -> bool:
    """Whether the merchant account is the application's (cached once true: a merchant never
    changes application and is never deleted)."""
    return await repository.merchant_belongs_to(conn, merchant_id, application_id)


# merchant_belongs_to as a gate of a one-statement write (payorch.db.one_statement): a row when
# :intent_merchant_account_id is :application_id's.
MERCHANT_OWNED_FRAGMENT = repository.MERCHANT_OWNED_FRAGMENT


async def count_applications(conn: AsyncConnection) -> int:
    return await repository.count_applications(conn)


async def lock_application(conn: AsyncConnection, application_id: str) -> None:
    """Serialize changes that must see the application's other rows as they are (e.g. revoking
    one of its API keys) until the caller's transaction ends."""
    await repository.lock_application(conn, application_id)


async def find_application(conn: AsyncConnection, application_id: str) -> Application | None:
    return await repository.get_application(conn, application_id)


async def list_applications(conn: AsyncConnection) -> list[ApplicationSummary]:
    """Every application, oldest first, with its merchant accounts (the operator's command line;
    an installation has few applications, so this is not paginated)."""
    listed = await repository.list_applications(conn)
    merchants: dict[str, list[str]] = {a.id: [] for a in listed}
    for merchant in await repository.merchants_of(conn, list(merchants)):
        merchants[merchant.application_id].append(merchant.id)
    return [ApplicationSummary(a, tuple(merchants[a.id])) for a in listed]


async def list_merchants(conn: AsyncConnection, application_id: str) -> list[MerchantAccount]:
    """The application's merchant accounts, newest first (a handful: not paginated)."""
    return list(reversed(await repository.merchants_of(conn, [application_id])))
