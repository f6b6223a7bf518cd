"""All SQL of simulated provider C. Every read by the API is scoped to the key's owner."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import record_of
from payorch.jsontypes import JsonObject
from payorch.simulator import repository as shared
from payorch.simulator.provider_c.records import (
    SimCDispute,
    SimCPaymentIntent,
    SimCRefund,
    SimCSession,
)
from payorch.simulator.provider_c.tables import (
    simulator_c_disputes as disputes,
)
from payorch.simulator.provider_c.tables import (
    simulator_c_payment_intents as intents,
)
from payorch.simulator.provider_c.tables import (
    simulator_c_refunds as refunds,
)
from payorch.simulator.provider_c.tables import (
    simulator_c_sessions as sessions,
)


def _fields(record: SimCSession | SimCPaymentIntent | SimCRefund | SimCDispute) -> JsonObject:
    return {field.name: getattr(record, field.name) for field in fields(record)}


# -- sessions ---------------------------------------------------------------------------------


async def insert_session(conn: AsyncConnection, session: SimCSession) -> None:
    await conn.execute(insert(sessions).values(**_fields(session)))


async def session_of(
    conn: AsyncConnection, session_id: str, *, owner: str | None, for_update: bool = False
) -> SimCSession | None:
    """``owner``'s session (None: anyone's, only for the buyer's page)."""
    query = select(sessions).where(sessions.c.id == session_id)
    if owner is not None:
        query = query.where(sessions.c.owner == owner)
    if for_update:
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return record_of(SimCSession, row) if row is not None else None


async def list_sessions(
    conn: AsyncConnection,
    owner: str,
    *,
    payment_intent: str | None,
    client_reference_id: str | None,
    limit: int,
    starting_after: SimCSession | None,
) -> list[SimCSession]:
    """Newest first, as the provider lists them."""
    query = select(sessions).where(sessions.c.owner == owner)
    if payment_intent is not None:
        query = query.where(sessions.c.payment_intent_id == payment_intent)
    if client_reference_id is not None:
        query = query.where(sessions.c.client_reference_id == client_reference_id)
    if starting_after is not None:
        query = query.where(
            (sessions.c.created_at < starting_after.created_at)
            | ((sessions.c.created_at == starting_after.created_at) & (sessions.c.id < starting_after.id))
        )
    query = query.order_by(sessions.c.created_at.desc(), sessions.c.id.desc()).limit(limit)
    return await shared.records(conn, SimCSession, query)


async def update_session(
    conn: AsyncConnection, session_id: str, *, status: str, payment_status: str, payment_intent_id: str | None
) -> None:
    await conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(status=status, payment_status=payment_status, payment_intent_id=payment_intent_id)
    )


# -- payment intents --------------------------------------------------------------------------


async def upsert_intent(conn: AsyncConnection, intent: SimCPaymentIntent, *, new: bool) -> None:
    values = _fields(intent)
    if new:
        await conn.execute(insert(intents).values(**values))
        return
    del values["id"]
    await conn.execute(update(intents).where(intents.c.id == intent.id).values(**values))


async def intent_of(
    conn: AsyncConnection, intent_id: str, *, owner: str | None, for_update: bool = False
) -> SimCPaymentIntent | None:
    query = select(intents).where(intents.c.id == intent_id)
    if owner is not None:
        query = query.where(intents.c.owner == owner)
    if for_update:
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return record_of(SimCPaymentIntent, row) if row is not None else None


async def holds_of(conn: AsyncConnection, owner: str) -> list[SimCPaymentIntent]:
    """``owner``'s PaymentIntents held (requires_capture), locked: the clock control moves them."""
    query = (
        select(intents)
        .where(intents.c.owner == owner, intents.c.status == "requires_capture")
        .order_by(intents.c.id)
        .with_for_update()
    )
    return await shared.records(conn, SimCPaymentIntent, query)


async def due_holds(conn: AsyncConnection, now: datetime, limit: int) -> list[SimCPaymentIntent]:
    """Any owner's holds whose ``capture_before`` has come (the worker lets them lapse), locked;
    those another worker holds are skipped (PostgreSQL)."""
    query = (
        select(intents)
        .where(intents.c.status == "requires_capture", intents.c.capture_before <= now)
        .order_by(intents.c.capture_before, intents.c.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return await shared.records(conn, SimCPaymentIntent, query)


async def set_payment_status(conn: AsyncConnection, session_id: str, payment_status: str) -> None:
    await conn.execute(
        update(sessions).where(sessions.c.id == session_id).values(payment_status=payment_status)
    )


# -- refunds ----------------------------------------------------------------------------------


async def insert_refund(conn: AsyncConnection, refund: SimCRefund) -> None:
    await conn.execute(insert(refunds).values(**_fields(refund)))


async def refund_of(conn: AsyncConnection, owner: str, refund_id: str) -> SimCRefund | None:
    query = select(refunds).where(refunds.c.id == refund_id, refunds.c.owner == owner)
    row = (await conn.execute(query)).mappings().first()
    return record_of(SimCRefund, row) if row is not None else None


async def refunds_of(
    conn: AsyncConnection, owner: str, payment_intent_id: str, limit: int
) -> list[SimCRefund]:
    query = (
        select(refunds)
        .where(refunds.c.owner == owner, refunds.c.payment_intent_id == payment_intent_id)
        .order_by(refunds.c.created_at.desc(), refunds.c.id.desc())
        .limit(limit)
    )
    return await shared.records(conn, SimCRefund, query)


# -- disputes ---------------------------------------------------------------------------------


async def insert_dispute(conn: AsyncConnection, dispute: SimCDispute) -> None:
    await conn.execute(insert(disputes).values(**_fields(dispute)))


async def dispute_of(conn: AsyncConnection, owner: str, dispute_id: str) -> SimCDispute | None:
    query = select(disputes).where(disputes.c.id == dispute_id, disputes.c.owner == owner)
    row = (await conn.execute(query)).mappings().first()
    return record_of(SimCDispute, row) if row is not None else None


async def latest_dispute(conn: AsyncConnection, owner: str, payment_intent_id: str) -> SimCDispute | None:
    query = (
        select(disputes)
        .where(disputes.c.owner == owner, disputes.c.payment_intent_id == payment_intent_id)
        .order_by(disputes.c.created_at.desc(), disputes.c.id.desc())
        .limit(1)
    )
    row = (await conn.execute(query)).mappings().first()
    return record_of(SimCDispute, row) if row is not None else None


async def set_dispute_status(conn: AsyncConnection, dispute_id: str, status: str) -> None:
    await conn.execute(update(disputes).where(disputes.c.id == dispute_id).values(status=status))


# -- the public owner's purge -----------------------------------------------------------------


# The public owner's purge: its objects made before a time, each table in turn.
purge_public = shared.public_purge(sessions, intents, refunds, disputes)
