"""The rules of payment intents: creation, reading, and applying a move of the state machine.

Other domains read and move intents through the functions here, with their own connection, so the
write stays in their transaction.
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import service as applications
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.errors import InvalidState, ResourceNotFound
from payorch.events import service as events
from payorch.events.catalogue import IntentEventData, PaymentIntentCreated, about
from payorch.events.records import Event, TimelineEntry
from payorch.ids import new_id
from payorch.intents import repository
from payorch.intents.records import PaymentIntent, PaymentIntentDetail, Waiting
from payorch.intents.schemas import CreatePaymentIntent
from payorch.intents.states import EVENTS_OF_MOVE, IntentStatus, Move, next_status, statuses_allowing
from payorch.jsontypes import JsonObject
from payorch.links import settle
from payorch.observability.metrics import record_intent_status
from payorch.providers.registry import get_adapter
from payorch.routing import gate


async def create_intent(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    request: CreatePaymentIntent,
    payment_link_id: str | None = None,
) -> PaymentIntentDetail:
    await check_create(conn, caller, request)
    intent, event = new_intent(clock, caller, request, payment_link_id)
    await repository.insert_intent(conn, intent)
    await events.write(conn, event)
    return created_detail(intent, event)


async def check_create(conn: AsyncConnection, caller: Caller, request: CreatePaymentIntent) -> None:
    """What must hold before an intent is created (reads only)."""
    if not await applications.merchant_belongs_to(conn, request.merchant_account_id, caller.application_id):
        raise ResourceNotFound(f"No merchant account {request.merchant_account_id}.")
    gate.check_currency(request.provider, request.currency)
    gate.check_holds(request.provider, request.capture_method)
    await gate.check_enabled(conn, request.merchant_account_id, request.provider)


def new_intent(
    clock: Clock, caller: Caller, request: CreatePaymentIntent, payment_link_id: str | None = None
) -> tuple[PaymentIntent, Event]:
    """The intent and its payment_intent.created event, not yet written."""
    now = clock.now()
    intent = PaymentIntent(
        id=new_id("payi"),
        application_id=caller.application_id,
        merchant_account_id=request.merchant_account_id,
        status=IntentStatus.CREATED.value,
        external_reference=request.external_reference,
        amount=request.amount,
        currency=request.currency,
        description=request.description,
        requested_provider=request.provider,
        provider=None,
        return_url=request.return_url,
        metadata=request.metadata,
        created_at=now,
        updated_at=now,
        payment_link_id=payment_link_id,
        capture_method=request.capture_method,
    )
    created = PaymentIntentCreated(
        **about(intent),
        merchant_account_id=request.merchant_account_id,
        amount=request.amount,
        currency=request.currency,
        requested_provider=request.provider,
    )
    return intent, events.payload_event(application_id=caller.application_id, payload=created, at=now)


def created_detail(intent: PaymentIntent, event: Event) -> PaymentIntentDetail:
    """The new intent as the API answers it: from what is written, without reading it back."""
    return PaymentIntentDetail(intent, [TimelineEntry(event.type, event.created_at)], None)


async def read_intent(conn: AsyncConnection, caller: Caller, intent_id: str) -> PaymentIntentDetail:
    found = await repository.get_with_payment(conn, caller.application_id, intent_id)
    if found is None:
        raise ResourceNotFound(f"No payment intent {intent_id}.")
    intent, payment = found
    waiting = await _waiting(conn, intent) if intent.status == IntentStatus.PROCESSING else None
    return PaymentIntentDetail(intent, await events.timeline(conn, intent_id), payment, waiting)


async def _waiting(conn: AsyncConnection, intent: PaymentIntent) -> Waiting | None:
    """What a PROCESSING intent waits for (its provider says why in payment.processing)."""
    found = await repository.waiting_checkout(conn, intent.id)
    if found is None:
        return None
    provider, created_at, next_check_at = found
    lifetime = get_adapter(provider).status_lifetime()  # how long the provider answers about it
    return Waiting(provider, next_check_at, created_at + lifetime if lifetime is not None else None)


async def find_intent(
    conn: AsyncConnection, intent_id: str, *, for_update: bool = False
) -> PaymentIntent | None:
    """By id alone (provider returns, notifications, workers); ``for_update`` locks it for a move."""
    return await repository.get_any(conn, intent_id, for_update=for_update)


async def find_application_intent(
    conn: AsyncConnection, application_id: str, intent_id: str, *, for_update: bool = False
) -> PaymentIntent | None:
    """The application's intent (None for another application's)."""
    return await repository.get(conn, application_id, intent_id, for_update=for_update)


async def apply_move(
    conn: AsyncConnection,
    clock: Clock,
    intent: PaymentIntent,
    move: Move,
    *payloads: IntentEventData,
    provider: str | None = None,
    routing: JsonObject | None = None,
    last_payment_error: JsonObject | None = None,
) -> PaymentIntent:
    """Move the intent and write the move's events, all in ``conn``'s transaction; answer the
    intent as moved (what the row now holds, so the caller need not read it again).

    ``payloads``: the data of each event the move emits (EVENTS_OF_MOVE, intents/states.py), in
    that order, each about this intent (ValueError otherwise, before anything is written).
    ``provider``: also record the provider a checkout chose; ``last_payment_error``: why the
    payment did not go through (stored on the intent; the caller puts it in the event's data
    too). Compare-and-set on the status read by the caller: if another transaction moved the
    intent meanwhile, nothing is written and INVALID_STATE is raised with the status found.
    """
    _check_payloads(intent, move, payloads)
    new = next_status(intent.status, move)
    now = clock.now()
    if not await repository.compare_and_set_status(
        conn,
        intent.id,
        expected=intent.status,
        new=new.value,
        at=now,
        provider=provider,
        routing=routing,
        last_payment_error=last_payment_error,
    ):
        found = await repository.status_of(conn, intent.id) or intent.status
        raise InvalidState(found, allowed=statuses_allowing(move))
    for payload in payloads:
        await events.emit_payload(conn, application_id=intent.application_id, payload=payload, at=now)
    if new == IntentStatus.AUTHORIZED and intent.payment_link_id is not None:
        await settle.after_payment(conn, clock, intent.payment_link_id)  # its link may be complete
    record_intent_status(provider or intent.provider, new.value)
    return replace(
        intent,
        status=new.value,
        updated_at=now,
        provider=provider or intent.provider,
        routing=routing
        if provider is not None or None not in (routing, last_payment_error)
        else intent.routing,
        last_payment_error=last_payment_error or intent.last_payment_error,
    )


def _check_payloads(intent: PaymentIntent, move: Move, payloads: tuple[IntentEventData, ...]) -> None:
    """The payloads are the move's events, in order, each about ``intent``."""
    expected = EVENTS_OF_MOVE[move]
    given = tuple(str(payload.TYPE) for payload in payloads)
    if given != expected:
        raise ValueError(f"The move {move.value} emits {list(expected)}, not {list(given)}.")
    if any(payload.payment_intent_id != intent.id for payload in payloads):
        raise ValueError(f"An event of the move {move.value} is about another intent than {intent.id}.")


async def record_refund(
    conn: AsyncConnection, clock: Clock, intent_id: str, *, everything_refunded: bool
) -> IntentStatus:
    """Move the intent for a refund that succeeded (its event, refund.succeeded, is the refund
    flow's to write). Locks the intent in ``conn``'s transaction."""
    intent = await repository.get_any(conn, intent_id, for_update=True)
    assert intent is not None  # a payment's intent always exists (foreign key)
    move = Move.REFUND_REST if everything_refunded else Move.REFUND_PART
    return IntentStatus((await apply_move(conn, clock, intent, move)).status)
