"""The columns of each export, in order, and how a record fills them.

A cell is an integer (amounts in minor units: never guarded, never quoted), text, or None (null;
an empty CSV cell). Times are ISO 8601 UTC with milliseconds, as the API writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Generic, TypeVar

import orjson

from payorch.activity.records import Entry
from payorch.amount_text import written
from payorch.clock import isoformat
from payorch.exports.records import Balance, RefundLine
from payorch.payments.records import Payment

Cell = str | int | None
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Column(Generic[R]):
    name: str
    cell: Callable[[R], Cell]


@lru_cache(maxsize=4096)
def formatted(minor: int, currency: str) -> str:
    """The amount as people read it (payorch.amount_text.written, Babel): 1050 USD -> $10.50.
    Cached: Babel takes some 20 µs an amount and exports repeat amounts."""
    return written(minor, currency)


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else isoformat(moment)


# Who a payment is, first in the payments' and the disputes' rows.
_PAYMENT_IDENTITY: tuple[Column[Payment], ...] = (
    Column("payment_id", lambda p: p.id),
    Column("payment_intent_id", lambda p: p.payment_intent_id),
    Column("external_reference", lambda p: p.external_reference),
    Column("merchant_account_id", lambda p: p.merchant_account_id),
    Column("provider", lambda p: p.provider),
    Column("provider_reference", lambda p: p.provider_reference),
)

PAYMENT_COLUMNS: tuple[Column[Payment], ...] = (
    *_PAYMENT_IDENTITY,
    Column("status", lambda p: p.status),
    Column("amount", lambda p: p.amount),
    Column("amount_formatted", lambda p: formatted(p.amount, p.currency)),
    Column("refunded_amount", lambda p: p.refunded_amount),
    Column("currency", lambda p: p.currency),
    Column("authorization_code", lambda p: p.authorization_code),
    Column("authorized_at", lambda p: _time(p.authorized_at)),
    Column("created_at", lambda p: _time(p.created_at)),
    # Holds (capture_method manual): `amount` is what was held, `amount_captured` the money taken.
    Column("capture_method", lambda p: p.capture_method),
    Column("amount_captured", lambda p: p.amount_captured),
    Column("amount_released", lambda p: p.amount_released),
    Column("capture_before", lambda p: _time(p.capture_before)),
    Column("captured_at", lambda p: _time(p.captured_at)),
)

REFUND_COLUMNS: tuple[Column[RefundLine], ...] = (
    Column("refund_id", lambda r: r.refund.id),
    Column("payment_id", lambda r: r.refund.payment_id),
    Column("payment_intent_id", lambda r: r.refund.payment_intent_id),
    Column("external_reference", lambda r: r.external_reference),
    Column("merchant_account_id", lambda r: r.merchant_account_id),
    Column("provider", lambda r: r.provider),
    Column("provider_reference", lambda r: r.refund.provider_refund_id),
    Column("status", lambda r: r.refund.status),
    Column("amount", lambda r: r.refund.amount),
    Column("amount_formatted", lambda r: formatted(r.refund.amount, r.refund.currency)),
    Column("currency", lambda r: r.refund.currency),
    Column("reason", lambda r: r.refund.reason),
    Column("failure_reason", lambda r: r.refund.failure_reason),
    Column("created_at", lambda r: _time(r.refund.created_at)),
    Column("updated_at", lambda r: _time(r.refund.updated_at)),
)

DISPUTE_COLUMNS: tuple[Column[Payment], ...] = (
    *_PAYMENT_IDENTITY,
    Column("status", lambda p: p.dispute_status),
    Column("kind", lambda p: p.dispute_kind),
    # What the dispute can take back: the money the payment took (a hold's captured part).
    Column("amount", lambda p: p.taken),
    Column("amount_formatted", lambda p: formatted(p.taken, p.currency)),
    Column("currency", lambda p: p.currency),
    Column("disputed_at", lambda p: _time(p.disputed_at)),
    Column("closed_at", lambda p: _time(p.dispute_closed_at)),
)

BALANCE_COLUMNS: tuple[Column[Balance], ...] = (
    Column("day", lambda b: b.day),
    Column("currency", lambda b: b.currency),
    Column("provider", lambda b: b.provider),
    Column("authorized", lambda b: b.authorized),
    Column("held", lambda b: b.held),
    Column("refunded", lambda b: b.refunded),
    Column("disputed", lambda b: b.disputed),
    Column("disputed_held", lambda b: b.disputed_held),
    Column("disputed_lost", lambda b: b.disputed_lost),
    Column("net", lambda b: b.net),
    Column("net_formatted", lambda b: formatted(b.net, b.currency)),
)

ACTIVITY_COLUMNS: tuple[Column[Entry], ...] = (
    Column("id", lambda e: e.id),
    Column("seq", lambda e: e.seq),
    Column("at", lambda e: _time(e.at)),
    Column("actor_type", lambda e: e.actor.type),
    Column("actor_id", lambda e: e.actor.id),
    Column("actor_email", lambda e: e.actor.email),
    Column("action", lambda e: e.action),
    Column("resource_type", lambda e: e.resource_type),
    Column("resource_id", lambda e: e.resource_id),
    Column("outcome", lambda e: e.outcome),
    Column("origin_ip", lambda e: e.origin.ip),
    Column("origin_user_agent", lambda e: e.origin.user_agent),
    Column("request_id", lambda e: e.origin.request_id),
    # The changes as compact JSON text with sorted keys (a cell holds text or a number).
    Column("changes", lambda e: orjson.dumps(e.changes, option=orjson.OPT_SORT_KEYS).decode()),
    Column("previous_hash", lambda e: e.previous_hash),
    Column("hash", lambda e: e.hash),
)
