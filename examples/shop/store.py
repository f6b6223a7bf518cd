"""Orders and received webhook events in one small SQLite file (aiosqlite, one connection).

Deduplication: ``webhook_events.event_id`` is the primary key, so a notice delivered twice (payorch
delivers at least once) is recorded once; a repeat only bumps ``times_received``. Writes take an
asyncio lock so a check-then-write is never interleaved with another coroutine's on the shared
connection. Order status only moves forward (PENDING -> PAID | FAILED -> REFUNDED): notices are not
ordered, and a late ``payment.processing`` must not undo a ``payment.authorized``.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

import aiosqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY,
    product_id TEXT NOT NULL,
    amount INTEGER NOT NULL,
    currency TEXT NOT NULL,
    provider TEXT NOT NULL,
    status TEXT NOT NULL,
    payment_intent_id TEXT UNIQUE,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_events (
    event_id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    payment_intent_id TEXT,
    received_at TEXT NOT NULL,
    times_received INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS webhook_events_intent ON webhook_events (payment_intent_id);
"""

# The shop's order status for each payorch intent status.
ORDER_STATUS_OF_INTENT = {
    "CREATED": "PENDING",
    "REQUIRES_ACTION": "PENDING",
    "PROCESSING": "PENDING",
    "AUTHORIZED": "PAID",
    "PARTIALLY_REFUNDED": "PAID",
    "FAILED": "FAILED",
    "CANCELLED": "FAILED",
    "EXPIRED": "FAILED",
    "REFUNDED": "REFUNDED",
}
# The intent status an event announces (refund events are left to a read of the intent).
INTENT_STATUS_OF_EVENT = {
    "payment.checkout.started": "REQUIRES_ACTION",
    "payment.processing": "PROCESSING",
    "payment.authorized": "AUTHORIZED",
    "payment.failed": "FAILED",
    "payment.cancelled": "CANCELLED",
    "payment.expired": "EXPIRED",
}
RANK = {"NEW": 0, "PENDING": 1, "PAID": 2, "FAILED": 2, "REFUNDED": 3}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Order:
    id: str
    product_id: str
    amount: int
    currency: str
    provider: str
    status: str
    payment_intent_id: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class ReceivedEvent:
    event_id: str
    type: str
    payment_intent_id: str | None
    received_at: str
    times_received: int


class Store:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: str) -> Store:
        conn = await aiosqlite.connect(path)
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.executescript(SCHEMA)
        await conn.commit()
        return cls(conn)

    async def close(self) -> None:
        await self._conn.close()

    # Orders

    async def create_order(self, product_id: str, amount: int, currency: str, provider: str) -> Order:
        order_id = "ord_" + secrets.token_urlsafe(12)  # unguessable: it is in the return URL
        now = _now()
        async with self._lock:
            await self._conn.execute(
                "INSERT INTO orders VALUES (?, ?, ?, ?, ?, 'NEW', NULL, ?, ?)",
                (order_id, product_id, amount, currency, provider, now, now),
            )
            await self._conn.commit()
        order = await self.get_order(order_id)
        assert order is not None
        return order

    async def get_order(self, order_id: str) -> Order | None:
        async with self._conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)) as cursor:
            row = await cursor.fetchone()
        return Order(*row) if row else None

    async def list_orders(self, limit: int = 50) -> list[Order]:
        sql = "SELECT * FROM orders ORDER BY created_at DESC LIMIT ?"
        async with self._conn.execute(sql, (limit,)) as cursor:
            return [Order(*row) for row in await cursor.fetchall()]

    async def attach_intent(self, order_id: str, payment_intent_id: str) -> None:
        async with self._lock:
            await self._conn.execute(
                "UPDATE orders SET payment_intent_id = ?, updated_at = ? WHERE id = ?",
                (payment_intent_id, _now(), order_id),
            )
            await self._conn.commit()
        await self.apply_intent_status(payment_intent_id, "CREATED")

    async def apply_intent_status(self, payment_intent_id: str, intent_status: str) -> None:
        """Move the intent's order forward to what ``intent_status`` means; never backward."""
        target = ORDER_STATUS_OF_INTENT.get(intent_status)
        if target is None:
            return
        async with self._lock:
            await self._advance(payment_intent_id, target)
            await self._conn.commit()

    async def _advance(self, payment_intent_id: str, target: str) -> None:
        sql = "SELECT status FROM orders WHERE payment_intent_id = ?"
        async with self._conn.execute(sql, (payment_intent_id,)) as cursor:
            row = await cursor.fetchone()
        if row is None or RANK[target] <= RANK[row[0]]:
            return
        await self._conn.execute(
            "UPDATE orders SET status = ?, updated_at = ? WHERE payment_intent_id = ?",
            (target, _now(), payment_intent_id),
        )

    # Webhook events

    async def record_event(self, event_id: str, type_: str, payment_intent_id: str | None) -> bool:
        """Store a verified event and apply it; False (and nothing applied) for a duplicate."""
        async with self._lock:
            cursor = await self._conn.execute(
                "INSERT OR IGNORE INTO webhook_events (event_id, type, payment_intent_id, received_at)"
                " VALUES (?, ?, ?, ?)",
                (event_id, type_, payment_intent_id, _now()),
            )
            fresh = cursor.rowcount == 1
            if not fresh:
                await self._conn.execute(
                    "UPDATE webhook_events SET times_received = times_received + 1 WHERE event_id = ?",
                    (event_id,),
                )
            elif payment_intent_id and type_ in INTENT_STATUS_OF_EVENT:
                # The order knows its intent before the checkout starts, so every event that
                # moves it (checkout.started onwards) finds it here.
                target = ORDER_STATUS_OF_INTENT[INTENT_STATUS_OF_EVENT[type_]]
                await self._advance(payment_intent_id, target)
            await self._conn.commit()
        return fresh

    async def events_for(self, payment_intent_id: str) -> list[ReceivedEvent]:
        sql = "SELECT * FROM webhook_events WHERE payment_intent_id = ? ORDER BY received_at"
        async with self._conn.execute(sql, (payment_intent_id,)) as cursor:
            return [ReceivedEvent(*row) for row in await cursor.fetchall()]
