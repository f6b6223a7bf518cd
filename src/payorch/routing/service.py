"""A merchant's routing versions: read, save (a new version, checked first: active at once, or a
draft to dry-run and activate later), list, activate; and the program a checkout routes by."""

from __future__ import annotations

import dataclasses

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.service import record_by
from payorch.applications import service as applications
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.connectors import service as connectors
from payorch.errors import ResourceNotFound
from payorch.ids import new_id
from payorch.pagination import Page, page_of
from payorch.routing import checks, repository
from payorch.routing.decide import ActiveProgram
from payorch.routing.program import RoutingProgram
from payorch.routing.records import RoutingVersion

VERSION = "routing_version"  # the activity log's resource type

# Versions never change, so their parsed programs are kept by id (a bounded few per process).
_PARSED: dict[str, RoutingProgram] = {}
_PARSED_MOST = 1024


def program_of(version: RoutingVersion) -> RoutingProgram:
    parsed = _PARSED.get(version.id)
    if parsed is None:
        if len(_PARSED) >= _PARSED_MOST:
            _PARSED.clear()
        parsed = _PARSED[version.id] = RoutingProgram.model_validate(version.program, strict=False)
    return parsed


async def active_program(conn: AsyncConnection, merchant_account_id: str) -> ActiveProgram | None:
    """What a checkout of the merchant routes by; None: no rules saved (the connectors' priority)."""
    found = await repository.active(conn, merchant_account_id)
    return ActiveProgram(found.version, program_of(found)) if found is not None else None


async def read(conn: AsyncConnection, caller: Caller, merchant_id: str) -> RoutingVersion | None:
    await check_merchant(conn, caller, merchant_id)
    return await repository.active(conn, merchant_id)


async def save_version(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    merchant_id: str,
    program: RoutingProgram,
    *,
    activate: bool = True,
) -> RoutingVersion:
    """Check ``program`` against the merchant's connectors and save it as the next version: active
    at once, or (``activate`` False) a draft that changes no checkout until it is activated
    (400 with each rule's problems, nothing written)."""
    await check_merchant(conn, caller, merchant_id)
    checks.check(program, await connectors.merchant_connectors(conn, merchant_id))
    # Two replacements at once take turns: the later one numbers after the earlier one.
    await applications.lock_application(conn, caller.application_id)
    now = clock.now()
    version = RoutingVersion(
        id=new_id("rtv"),
        application_id=caller.application_id,
        merchant_account_id=merchant_id,
        version=await repository.latest_number(conn, merchant_id) + 1,
        program=program.as_json(),
        active=False,
        created_at=now,
        activated_at=None,
    )
    await repository.insert_version(conn, version)
    if activate:
        await repository.make_active(conn, merchant_id, version.version, now)
        version = dataclasses.replace(version, active=True, activated_at=now)
    logged = {"merchant_account_id": merchant_id, "version": version.version}
    await record_by(conn, clock, caller, "routing.version_created", (VERSION, version.id), logged)
    if activate:  # saved and activated at once: two entries, so each action means one thing
        await record_by(conn, clock, caller, "routing.version_activated", (VERSION, version.id), logged)
    return version


async def activate(
    conn: AsyncConnection, clock: Clock, caller: Caller, merchant_id: str, number: int
) -> RoutingVersion:
    """Make an earlier version active again, if it still passes the checks (connectors change)."""
    found = await version_of(conn, caller, merchant_id, number)
    checks.check(program_of(found), await connectors.merchant_connectors(conn, merchant_id))
    await applications.lock_application(conn, caller.application_id)
    now = clock.now()
    await repository.make_active(conn, merchant_id, number, now)
    logged = {"merchant_account_id": merchant_id, "version": number}
    await record_by(conn, clock, caller, "routing.version_activated", (VERSION, found.id), logged)
    return dataclasses.replace(found, active=True, activated_at=now)


async def version_of(conn: AsyncConnection, caller: Caller, merchant_id: str, number: int) -> RoutingVersion:
    """Version ``number`` of the merchant (a draft, an earlier one or the active one); 404 if none."""
    await check_merchant(conn, caller, merchant_id)
    found = await repository.get(conn, merchant_id, number)
    if found is None:
        raise ResourceNotFound(f"No routing version {number} for merchant account {merchant_id}.")
    return found


async def versions(
    conn: AsyncConnection, caller: Caller, merchant_id: str, cursor: str | None, limit: int
) -> Page[RoutingVersion]:
    await check_merchant(conn, caller, merchant_id)
    found = await repository.page(conn, merchant_id, int(cursor) if cursor else None, limit + 1)
    return page_of(found, limit, lambda v: str(v.version))


async def check_merchant(conn: AsyncConnection, caller: Caller, merchant_id: str) -> None:
    if not await applications.merchant_belongs_to(conn, merchant_id, caller.application_id):
        raise ResourceNotFound(f"No merchant account {merchant_id}.")
