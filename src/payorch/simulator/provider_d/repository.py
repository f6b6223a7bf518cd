"""Simulated provider D's session row (tables.py) as a record, and all its SQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.jsontypes import JsonObject
from payorch.simulator import repository as shared
from payorch.simulator.provider_d.tables import simulator_d_sessions as sessions


@dataclass(frozen=True, slots=True)
class SimDSession:
    id: str
    owner: str
    intent: str
    amount: int
    currency: str
    manual_capture: bool
    notification_url: str | None
    request: JsonObject  # the /sessions request, as made
    expires_at: datetime
    created_at: datetime
    status: str = "active"
    refusals: int = 0
    session_result: str | None = None
    psp: str | None = None  # the payment authorised in it, and where it stands
    payment: str | None = None
    held: int = 0
    captured: int = 0
    refunded: int = 0
    hold_ends_at: datetime | None = None

    def status_at(self, now: datetime) -> str:
        """As the API shows it: an active session past ``expiresAt`` expired."""
        return "expired" if self.status == "active" and now >= self.expires_at else self.status

    @property
    def merchant_account(self) -> str:
        return str(self.request["merchantAccount"])

    @property
    def reference(self) -> str:
        return str(self.request["reference"])


async def insert(conn: AsyncConnection, session: SimDSession) -> None:
    await shared.insert_record(conn, sessions, session)


async def save(conn: AsyncConnection, session: SimDSession) -> None:
    await shared.save_record(conn, sessions, session)


async def session_of(
    conn: AsyncConnection, session_id: str, *, owner: str | None, for_update: bool = False
) -> SimDSession | None:
    """``owner``'s session (None: anyone's, for the buyer's page, which carries no credentials)."""
    found = shared.owned(conn, SimDSession, sessions, "id", session_id, owner=owner, for_update=for_update)
    return await found


async def paid_by(conn: AsyncConnection, psp: str, owner: str) -> SimDSession | None:
    """The session whose authorised payment is ``psp``, locked for the change."""
    return await shared.owned(conn, SimDSession, sessions, "psp", psp, owner=owner, for_update=True)


async def sessions_for(conn: AsyncConnection, owner: str, intent: str) -> list[SimDSession]:
    """``owner``'s sessions made for a payment intent, newest first."""
    query = select(sessions).where(sessions.c.owner == owner, sessions.c.intent == intent)
    return await shared.records(conn, SimDSession, query.order_by(sessions.c.created_at.desc()))


async def holds_ending(
    conn: AsyncConnection, owner: str | None, before: datetime | None, limit: int
) -> list[SimDSession]:
    """Held payments (``owner``'s, or anyone's) whose authorisation ends before ``before`` (or ever)."""
    query = select(sessions).where(sessions.c.payment == "authorised")
    if before is not None:
        query = query.where(sessions.c.hold_ends_at <= before)
    if owner is not None:
        query = query.where(sessions.c.owner == owner)
    query = query.order_by(sessions.c.hold_ends_at).limit(limit).with_for_update()
    return await shared.records(conn, SimDSession, query)
