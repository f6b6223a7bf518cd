"""An export: its rows read batch by batch, each batch in a read of its own, and written out
as they come (nothing holds more than one batch; no transaction stays open while the client
reads)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeAlias, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.records import Entry, Filters
from payorch.auth.service import Caller
from payorch.exports import links, repository
from payorch.exports.columns import (
    ACTIVITY_COLUMNS,
    BALANCE_COLUMNS,
    DISPUTE_COLUMNS,
    REFUND_COLUMNS,
    Cell,
    Column,
)
from payorch.exports.records import RefundLine, Window
from payorch.exports.schemas import ActivityExportQuery, ExportKind, ExportQuery
from payorch.exports.writing import Writer, writer_for
from payorch.payments.records import Payment

Reading: TypeAlias = Callable[[], AbstractAsyncContextManager[AsyncConnection]]

BATCH = 1000  # rows a read; what the process holds of an export at once
# Rows a chunk of the answer (some 25 KB of CSV): the answer waits for its reader chunk by
# chunk and yields the event loop between chunks (exports/streaming.py).
CHUNK = 100

R = TypeVar("R")
Row = tuple[Cell, ...]


class Rows(Protocol):
    @property
    def names(self) -> tuple[str, ...]: ...

    def batches(self, reading: Reading, window: Window) -> AsyncIterator[list[Row]]: ...


def _cells(columns: tuple[Column[R], ...], records: list[R]) -> list[Row]:
    return [tuple(column.cell(record) for column in columns) for record in records]


@dataclass(frozen=True, slots=True)
class Keyset(Generic[R]):
    """Rows read in batches after the last one's position."""

    columns: tuple[Column[R], ...]
    read: Callable[[AsyncConnection, Window, str, int], Awaitable[list[R]]]
    position: Callable[[R], str]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    async def batches(self, reading: Reading, window: Window) -> AsyncIterator[list[Row]]:
        after = ""  # below every id
        while True:
            async with reading() as conn:
                found = await self.read(conn, window, after, BATCH)
            if found:
                yield _cells(self.columns, found)
            if len(found) < BATCH:
                return
            after = self.position(found[-1])


@dataclass(frozen=True, slots=True)
class Whole(Generic[R]):
    """Rows few enough to read at once (a handful per day)."""

    columns: tuple[Column[R], ...]
    read: Callable[[AsyncConnection, Window], Awaitable[list[R]]]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    async def batches(self, reading: Reading, window: Window) -> AsyncIterator[list[Row]]:
        async with reading() as conn:
            found = await self.read(conn, window)
        if found:
            yield _cells(self.columns, found)


def _payment_id(payment: Payment) -> str:
    return payment.id


def _refund_id(line: RefundLine) -> str:
    return line.refund.id


def _seq(entry: Entry) -> str:
    return str(entry.seq)


SOURCES: dict[ExportKind, Rows] = {
    ExportKind.PAYMENTS: Keyset(
        links.LINKED_PAYMENT_COLUMNS, links.linked_payments_after, links.payment_position
    ),
    ExportKind.REFUNDS: Keyset(REFUND_COLUMNS, repository.refunds_after, _refund_id),
    ExportKind.DISPUTES: Keyset(DISPUTE_COLUMNS, repository.disputes_after, _payment_id),
    ExportKind.BALANCES: Whole(BALANCE_COLUMNS, repository.balances),
    ExportKind.ACTIVITY: Keyset(ACTIVITY_COLUMNS, repository.activity_after, _seq),
    ExportKind.PAYMENT_LINKS: Keyset(links.LINK_COLUMNS, links.links_after, links.link_position),
}


@dataclass(frozen=True, slots=True)
class Export:
    """What the endpoint streams: the bytes as they are made, their media type, a file name."""

    content: AsyncIterator[bytes]
    media_type: str
    filename: str


async def _written(reading: Reading, rows: Rows, window: Window, writer: Writer) -> AsyncIterator[bytes]:
    start = writer.start()
    if start:
        yield start
    async for batch in rows.batches(reading, window):
        for first in range(0, len(batch), CHUNK):
            yield writer.rows(batch[first : first + CHUNK])


def export(reading: Reading, caller: Caller, kind: ExportKind, query: ExportQuery) -> Export:
    """The caller's ``kind`` of [from, to), as it will be read while it is sent, each batch in
    its own ``reading()``: Database.listing, the read replica while it is caught up, as the lists."""
    window = Window(caller.application_id, query.from_, query.to)
    if isinstance(query, ActivityExportQuery):
        window = Window(
            caller.application_id,
            query.from_,
            query.to,
            Filters(caller.application_id, query.actor_id, query.action, query.resource_id),
        )
    rows = SOURCES[kind]
    writer = writer_for(query.format, rows.names)
    span = f"{query.from_:%Y%m%dT%H%M%SZ}-{query.to:%Y%m%dT%H%M%SZ}"
    return Export(
        _written(reading, rows, window, writer),
        writer.media_type,
        f"payorch-{kind.value}-{span}.{query.format}",
    )
