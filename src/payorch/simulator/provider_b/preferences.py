"""Provider B's preferences API: create, read, update (in the caller's transaction)."""

from __future__ import annotations

import dataclasses
import uuid

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock, isoformat
from payorch.jsontypes import JsonObject
from payorch.simulator.provider_b import repository
from payorch.simulator.provider_b.records import SimBPreference
from payorch.simulator.provider_b.wire import check_preference, collector_of, not_found


async def create_preference(
    conn: AsyncConnection, clock: Clock, owner: str, data: JsonObject
) -> SimBPreference:
    checked = check_preference(data)
    preference_id = f"{collector_of(owner)}-{uuid.uuid4()}"
    now = clock.now()
    await repository.insert_preference(conn, preference_id, owner, checked, now)
    # What was written, without reading it back.
    written = {field.name: getattr(checked, field.name) for field in dataclasses.fields(checked)}
    return SimBPreference(**written, id=preference_id, owner=owner, created_at=now)


async def _owned(conn: AsyncConnection, owner: str, preference_id: str) -> SimBPreference:
    preference = await repository.get_preference(conn, preference_id, owner=owner)
    if preference is None:
        raise not_found("Preference")
    return preference


async def get_preference(conn: AsyncConnection, owner: str, preference_id: str) -> SimBPreference:
    return await _owned(conn, owner, preference_id)


async def update_preference(
    conn: AsyncConnection, owner: str, preference_id: str, data: JsonObject
) -> SimBPreference:
    """PUT: any field may change (e.g. ``expires`` + ``expiration_date_to`` to expire it now)."""
    preference = await _owned(conn, owner, preference_id)
    merged = {**preference.body, **data}
    if preference.expiration_date_from and "expiration_date_from" not in data:
        merged["expiration_date_from"] = isoformat(preference.expiration_date_from)
    if preference.expiration_date_to and "expiration_date_to" not in data:
        merged["expiration_date_to"] = isoformat(preference.expiration_date_to)
    await repository.update_preference(conn, preference_id, check_preference(merged))
    return await _owned(conn, owner, preference_id)
