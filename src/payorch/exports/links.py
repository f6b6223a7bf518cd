"""Payment links in the exports: the payment_links export (one row per link made in the range,
with what it collected), and the payments export's last column, ``payment_link_id``, the link a
payment came from (empty for a payment the API's own intent made).

Both read other domains' tables (payment_links, payment_intents) read only, in the keyset
batches every export reads in (payorch.exports.service.Keyset)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import isoformat
from payorch.db.records import record_of
from payorch.db.tables import payment_intents as intents
from payorch.db.tables.links import payment_links as links
from payorch.exports import repository
from payorch.exports.columns import PAYMENT_COLUMNS, Column, formatted
from payorch.exports.records import Window
from payorch.links import repository as link_rows
from payorch.links.records import PaymentLink, Tally
from payorch.payments.records import Payment


@dataclass(frozen=True, slots=True)
class LinkLine:
    """A link as stored (an expiry is written within the worker's sweep, 30 s) and what its paid
    intents collected."""

    link: PaymentLink
    tally: Tally


@dataclass(frozen=True, slots=True)
class LinkedPayment:
    payment: Payment
    payment_link_id: str | None


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else isoformat(moment)


LINK_COLUMNS: tuple[Column[LinkLine], ...] = (
    Column("payment_link_id", lambda line: line.link.id),
    Column("merchant_account_id", lambda line: line.link.merchant_account_id),
    Column("external_reference", lambda line: line.link.external_reference),
    Column("description", lambda line: line.link.description),
    Column("status", lambda line: line.link.status),
    Column("amount", lambda line: line.link.amount),
    Column("amount_formatted", lambda line: formatted(line.link.amount, line.link.currency)),
    Column("currency", lambda line: line.link.currency),
    Column("max_payments", lambda line: line.link.max_payments),
    Column("payments_count", lambda line: line.tally.payments_count),
    Column("amount_collected", lambda line: line.tally.amount_collected),
    Column(
        "amount_collected_formatted",
        lambda line: formatted(line.tally.amount_collected, line.link.currency),
    ),
    Column("expires_at", lambda line: _time(line.link.expires_at)),
    Column("created_at", lambda line: _time(line.link.created_at)),
    Column("updated_at", lambda line: _time(line.link.updated_at)),
)


def _of_payment(column: Column[Payment]) -> Column[LinkedPayment]:
    return Column(column.name, lambda line: column.cell(line.payment))


# The payments export's columns, whatever they are, then the link's id.
LINKED_PAYMENT_COLUMNS: tuple[Column[LinkedPayment], ...] = (
    *(_of_payment(column) for column in PAYMENT_COLUMNS),
    Column("payment_link_id", lambda line: line.payment_link_id),
)

_LINKS = (
    select(links)
    .where(
        links.c.application_id == bindparam("application_id"),
        links.c.id >= bindparam("lowest"),
        links.c.id < bindparam("below"),
        links.c.id > bindparam("after"),
    )
    .order_by(links.c.id)
    .limit(bindparam("batch"))
)
_LINK_OF_INTENT = select(intents.c.id, intents.c.payment_link_id).where(
    intents.c.id.in_(bindparam("intent_ids", expanding=True)), intents.c.payment_link_id.is_not(None)
)


async def links_after(conn: AsyncConnection, window: Window, after: str, batch: int) -> list[LinkLine]:
    """The links made in the window (by id, as the links list pages), after ``after``."""
    params = {"application_id": window.application_id, "after": after, "batch": batch}
    rows = await conn.execute(_LINKS, {**params, **repository.id_bounds("plink", window)})
    found = [record_of(PaymentLink, row) for row in rows.mappings()]
    tallies = await link_rows.tallies(conn, [link.id for link in found])
    return [LinkLine(link, tallies.get(link.id, Tally())) for link in found]


async def _links_of(conn: AsyncConnection, intent_ids: Sequence[str]) -> dict[str, str]:
    if not intent_ids:
        return {}
    rows = await conn.execute(_LINK_OF_INTENT, {"intent_ids": list(intent_ids)})
    return {str(row[0]): str(row[1]) for row in rows}


async def linked_payments_after(
    conn: AsyncConnection, window: Window, after: str, batch: int
) -> list[LinkedPayment]:
    """The payments export's batch (payorch.exports.repository.payments_after) with each
    payment's link: one more query a batch, on the intents' primary key."""
    found = await repository.payments_after(conn, window, after, batch)
    linked = await _links_of(conn, [payment.payment_intent_id for payment in found])
    return [LinkedPayment(payment, linked.get(payment.payment_intent_id)) for payment in found]


def link_position(line: LinkLine) -> str:
    return line.link.id


def payment_position(line: LinkedPayment) -> str:
    return line.payment.id
