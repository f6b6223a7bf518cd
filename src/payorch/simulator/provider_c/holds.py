"""Simulated provider C's manual capture (docs/simulator.md, "Holds"): a Checkout Session made
with ``payment_intent_data[capture_method]=manual`` leaves its PaymentIntent ``requires_capture``
once paid, ``amount_capturable`` held until ``capture_before`` (HOLD_DAYS); capture takes all or
part of it once (the rest is released), cancel releases it, and a hold nobody captured lapses:
canceled (``automatic``), its charge expired. Each change answers the events it wrote, to be
sent once the caller's transaction commits. In the caller's transaction; never commits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.jsontypes import JsonObject
from payorch.simulator.lapses import Lapses, end_in
from payorch.simulator.outbox.records import Notification
from payorch.simulator.provider_c import events, repository
from payorch.simulator.provider_c.records import SimCPaymentIntent
from payorch.simulator.provider_c.render import charge_body, intent_body
from payorch.simulator.provider_c.wire import SimCWireError, integer, text

# A card authorization is held this long (the provider's capture_before for online card payments).
HOLD_DAYS = 7
CANCELLATION_REASONS = ("duplicate", "fraudulent", "requested_by_customer", "abandoned")
# The statuses the provider lets cancel (the simulator reaches only requires_payment_method and
# requires_capture); named in its refusal.
CANCELABLE = (
    "requires_payment_method",
    "requires_capture",
    "requires_confirmation",
    "requires_action",
    "processing",
)


@dataclass(frozen=True, slots=True)
class Moved:
    """A hold after a change, and the events it wrote."""

    intent: SimCPaymentIntent
    sent: list[Notification]


# (conn, clock, public_url, owner, PaymentIntent id, the request's form) -> the hold moved.
Move = Callable[[AsyncConnection, Clock, str, str, str, JsonObject], Awaitable[Moved]]


def authorized(intent: SimCPaymentIntent, charge: str, now: datetime) -> SimCPaymentIntent:
    """The buyer paid a manual PaymentIntent: the whole amount held, nothing received."""
    return replace(
        intent,
        status="requires_capture",
        amount_capturable=intent.amount,
        amount_received=0,
        latest_charge=charge,
        decline_code=None,
        capture_before=now + timedelta(days=HOLD_DAYS),
    )


async def _owned(conn: AsyncConnection, owner: str, intent_id: str) -> SimCPaymentIntent:
    intent = await repository.intent_of(conn, intent_id, owner=owner, for_update=True)
    if intent is None:
        raise SimCWireError(
            404, f"No such payment_intent: '{intent_id}'", code="resource_missing", param="intent"
        )
    return intent


async def _send(
    conn: AsyncConnection,
    public_url: str,
    intent: SimCPaymentIntent,
    kinds: list[tuple[str, JsonObject]],
    now: datetime,
) -> list[Notification]:
    """Events about ``intent``, to its session's notification URL (none without one)."""
    session = await repository.session_of(conn, intent.session_id, owner=intent.owner)
    if session is None:
        return []
    sent = [await events.enqueue(conn, public_url, session, kind, body, now) for kind, body in kinds]
    return [event for event in sent if event is not None]


def _unexpected(intent: SimCPaymentIntent, verb: str) -> SimCWireError:
    if verb == "captured" and intent.status == "succeeded":
        message = "This PaymentIntent could not be captured because it has already been captured."
    elif verb == "captured":
        message = (
            f"This PaymentIntent could not be captured because it has a status of {intent.status}. "
            "Only a PaymentIntent with one of the following statuses may be captured: requires_capture."
        )
    else:
        message = (
            f"You cannot cancel this PaymentIntent because it has a status of {intent.status}. "
            "Only a PaymentIntent with one of the following statuses may be canceled: "
            + ", ".join(CANCELABLE)
            + "."
        )
    return SimCWireError(400, message, code="payment_intent_unexpected_state")


async def capture(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, intent_id: str, body: JsonObject
) -> Moved:
    """Capture ``amount_to_capture`` (absent: all that is capturable) once; the rest is released."""
    now = clock.now()
    intent = (await _owned(conn, owner, intent_id)).as_seen(now)
    if intent.status != "requires_capture":
        raise _unexpected(intent, "captured")
    amount = intent.amount_capturable
    if body.get("amount_to_capture") is not None:
        amount = integer(body.get("amount_to_capture"), "amount_to_capture", minimum=1)
    if amount > intent.amount_capturable:
        raise SimCWireError(
            400,
            f"The amount to capture ({amount}) is greater than the amount capturable "
            f"({intent.amount_capturable}) of this PaymentIntent.",
            code="amount_too_large",
            param="amount_to_capture",
        )
    captured = replace(intent, status="succeeded", amount_received=amount, amount_capturable=0)
    await repository.upsert_intent(conn, captured, new=False)
    await repository.set_payment_status(conn, intent.session_id, "paid")
    kinds = [("charge.captured", charge_body(captured)), ("payment_intent.succeeded", intent_body(captured))]
    return Moved(captured, await _send(conn, public_url, captured, kinds, now))


async def cancel(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, intent_id: str, body: JsonObject
) -> Moved:
    """Release a hold (``cancellation_reason`` as given). A PaymentIntent whose Checkout Session
    is still open is the session's to end (expire it)."""
    now = clock.now()
    intent = (await _owned(conn, owner, intent_id)).as_seen(now)
    reason = text(body, "cancellation_reason", limit=40)
    if reason is not None and reason not in CANCELLATION_REASONS:
        raise SimCWireError(
            400,
            "Invalid cancellation_reason: must be one of " + ", ".join(CANCELLATION_REASONS),
            param="cancellation_reason",
        )
    if intent.status == "requires_payment_method":
        session = await repository.session_of(conn, intent.session_id, owner=owner)
        if session is not None and session.status_at(now) == "open":
            raise SimCWireError(
                400,
                "You cannot cancel this PaymentIntent because it was created by Checkout. "
                "To cancel it, expire the Checkout Session instead.",
                code="payment_intent_unexpected_state",
            )
    if intent.status not in ("requires_capture", "requires_payment_method"):
        raise _unexpected(intent, "canceled")
    canceled = replace(
        intent, status="canceled", amount_capturable=0, canceled_at=now, cancellation_reason=reason
    )
    await repository.upsert_intent(conn, canceled, new=False)
    return Moved(
        canceled,
        await _send(conn, public_url, canceled, [("payment_intent.canceled", intent_body(canceled))], now),
    )


async def _lapse(conn: AsyncConnection, public_url: str, held: SimCPaymentIntent, now: datetime) -> Moved:
    """Write a lapsed hold as the API already shows it: canceled, its charge expired."""
    lapsed = held.as_seen(now)
    await repository.upsert_intent(conn, lapsed, new=False)
    kinds = [("charge.expired", charge_body(lapsed)), ("payment_intent.canceled", intent_body(lapsed))]
    return Moved(lapsed, await _send(conn, public_url, lapsed, kinds, now))


async def _held(
    conn: AsyncConnection, owner: str | None, before: datetime | None, limit: int
) -> list[SimCPaymentIntent]:
    """The clock control's holds (an owner's, all of them) or the worker's (any owner's due)."""
    if owner is not None:
        return await repository.holds_of(conn, owner)
    assert before is not None  # the worker's pass asks for those due now
    return await repository.due_holds(conn, before, limit)


async def _save(conn: AsyncConnection, intent: SimCPaymentIntent) -> None:
    await repository.upsert_intent(conn, intent, new=False)


async def _lapsed(
    conn: AsyncConnection, public_url: str, held: SimCPaymentIntent, now: datetime
) -> list[Notification]:
    return (await _lapse(conn, public_url, held, now)).sent


# The clock of the holds: canceled past capture_before, with charge.expired and payment_intent.canceled.
LAPSES = Lapses(events.NOTIFIER, _held, *end_in("capture_before", _save), _lapsed, lambda intent: intent.id)
