"""Re-encrypt every value stored under PAYORCH_SECRET_KEY with its first key (`payorch
secret-key reencrypt`, docs/deployment.md "Rotating PAYORCH_SECRET_KEY").

``PLACES`` lists every column that holds a value encrypted by payorch.crypto. Each value is
re-encrypted in a transaction of its own, by a compare-and-set on the value read (a value that a
request changed meanwhile is read again, never overwritten), so the service keeps running and
a run that stops half-way (a crash, a kill) loses nothing: a value is either under its old key
or under the first key, and the next run skips those already under the first key. A value that
no key of the list decrypts is counted and named by its row's id, never shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from sqlalchemy import Table, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.crypto import Cipher
from payorch.dashboard.records import TOTP_CHALLENGE
from payorch.db import Phases
from payorch.db.tables.dashboard import dashboard_sessions
from payorch.db.tables.people import users
from payorch.db.tables.providers import connectors
from payorch.db.tables.webhooks import webhook_endpoints

BATCH = 200  # rows read at a time (each value is then written in its own transaction)
ATTEMPTS = 5  # compare-and-set tries on one value a request keeps changing


@dataclass(frozen=True)
class Place:
    """A column holding encrypted values; with ``prefix``, only values starting with it are
    encrypted (the token follows the prefix), the others are left alone."""

    table: Table
    column: str
    prefix: str = ""

    @property
    def name(self) -> str:
        return f"{self.table.name}.{self.column}"


PLACES = (
    Place(connectors, "credentials"),  # a connector's provider credentials (JSON)
    Place(webhook_endpoints, "secret_encrypted"),  # an endpoint's signing secret
    Place(webhook_endpoints, "previous_secret_encrypted"),  # the one replaced, while it still signs
    Place(users, "totp_secret"),  # a person's TOTP secret
    Place(dashboard_sessions, "challenge", prefix=TOTP_CHALLENGE),  # a TOTP secret being enrolled
)


class Outcome(Enum):
    REENCRYPTED = "re-encrypted"
    CURRENT = "already under the first key"
    UNREADABLE = "decrypted by no key"
    GONE = "gone"  # the row was deleted or the value cleared meanwhile
    BUSY = "changed by requests at each try"  # left as it was: the next run takes it


@dataclass
class Tally:
    """What one place's run did: a count per outcome and the ids of the rows whose value was
    left as it was (unreadable, or changing at every try)."""

    place: Place
    counts: dict[Outcome, int] = field(default_factory=lambda: dict.fromkeys(Outcome, 0))
    left: list[tuple[str, Outcome]] = field(default_factory=list)


Done = Callable[[Place, str, Outcome], None]


async def reencrypt_all(phases: Phases, cipher: Cipher, done: Done | None = None) -> list[Tally]:
    """Every place's values under ``cipher``'s first key; ``done`` hears of each value."""
    return [await reencrypt_place(phases, cipher, place, done) for place in PLACES]


async def reencrypt_place(phases: Phases, cipher: Cipher, place: Place, done: Done | None) -> Tally:
    tally = Tally(place)
    row_id, column = place.table.c.id, place.table.c[place.column]
    after = ""
    while True:
        async with phases.reading() as conn:
            query = select(row_id, column).where(row_id > after, column.is_not(None))
            rows = (await conn.execute(query.order_by(row_id).limit(BATCH))).all()
        for found_id, value in rows:
            outcome = await reencrypt_value(phases, cipher, place, str(found_id), value)
            tally.counts[outcome] += 1
            if outcome in (Outcome.UNREADABLE, Outcome.BUSY):
                tally.left.append((str(found_id), outcome))
            if done is not None:
                done(place, str(found_id), outcome)
        if len(rows) < BATCH:
            return tally
        after = str(rows[-1][0])


async def first_unreadable(phases: Phases, cipher: Cipher) -> tuple[Place, str] | None:
    """A stored value of each place that ``cipher`` cannot decrypt: (its place, its row's id),
    or None. One value a place, read at a start: a database restored without its key, or a
    service started with the wrong one, is refused before it fails request by request."""
    async with phases.reading() as conn:
        for place in PLACES:
            column = place.table.c[place.column]
            query = select(place.table.c.id, column).where(column.like(place.prefix + "%")).limit(1)
            found = (await conn.execute(query)).first()
            if found is None:
                continue
            try:
                cipher.decrypt(found[1].removeprefix(place.prefix))
            except ValueError:
                return place, str(found[0])
    return None


async def reencrypt_value(
    phases: Phases, cipher: Cipher, place: Place, row_id: str, value: str | None
) -> Outcome:
    """One value, in a transaction of its own: written only if it is still ``value``."""
    for _ in range(ATTEMPTS):
        if value is None or not value.startswith(place.prefix):
            return Outcome.GONE
        try:
            token = cipher.reencrypted(value.removeprefix(place.prefix))
        except ValueError:
            return Outcome.UNREADABLE
        if token is None:
            return Outcome.CURRENT
        async with phases.transaction() as conn:
            if await _swap(conn, place, row_id, value, place.prefix + token):
                return Outcome.REENCRYPTED
            value = await _read(conn, place, row_id)
    return Outcome.BUSY


async def _swap(conn: AsyncConnection, place: Place, row_id: str, old: str, new: str) -> bool:
    table, column = place.table, place.table.c[place.column]
    statement = update(table).where(table.c.id == row_id, column == old).values({place.column: new})
    return (await conn.execute(statement)).rowcount == 1


async def _read(conn: AsyncConnection, place: Place, row_id: str) -> str | None:
    table = place.table
    found = (await conn.execute(select(table.c[place.column]).where(table.c.id == row_id))).first()
    return None if found is None else found[0]
