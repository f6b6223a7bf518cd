"""Simulated provider C's Checkout Sessions and their PaymentIntents: create, read, expire, the
buyer's choice on the page, and the settle control. In the caller's transaction; never commits.
Each change that sends events answers them, to be delivered once the transaction commits."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.jsontypes import JsonObject
from payorch.money import exponent
from payorch.simulator.outbox import repository as outbox
from payorch.simulator.outbox import write
from payorch.simulator.outbox.records import Notification
from payorch.simulator.provider_c import events, holds, repository
from payorch.simulator.provider_c.records import SimCPaymentIntent, SimCSession
from payorch.simulator.provider_c.render import intent_body, session_body
from payorch.simulator.provider_c.wire import (
    SimCWireError,
    integer,
    missing,
    new_object_id,
    string_map,
    text,
)

SHORTEST = timedelta(minutes=30)
LONGEST = timedelta(hours=24)
DEFAULT_LIFETIME = timedelta(hours=24)
# The page's buttons (the seed's convention) and the intent status each leaves.
OUTCOMES = ("approve", "reject", "pending", "cancel")
# The page's test cards (Stripe's): the code a declined attempt reports, or a payment left
# processing reports when it fails (settle reject). 0119 is Stripe's processing error: its
# ``code`` names it, without a decline code (render.CARD_ERRORS).
TEST_CARDS = {
    "4000000000000002": ("generic_decline", "declined"),
    "4000000000009995": ("insufficient_funds", "insufficient funds"),
    "4100000000000019": ("fraudulent", "blocked as fraudulent"),
    "4000000000000119": ("processing_error", "processing error"),
    "4242424242424241": ("incorrect_number", "incorrect number"),
    "4000000000000127": ("incorrect_cvc", "incorrect security code"),
    "4000000000000069": ("expired_card", "expired card"),
    "4000000000009987": ("lost_card", "lost card"),
    "4000000000009979": ("stolen_card", "stolen card"),
    # The simulator's own (Stripe has no test card for these), so that every code payorch
    # documents can be made.
    "4000000000000200": ("invalid_number", "invalid number"),
    "4000000000000201": ("invalid_cvc", "invalid security code"),
    "4000000000000202": ("invalid_expiry_month", "invalid expiry month"),
    "4000000000000203": ("invalid_expiry_year", "invalid expiry year"),
    "4000000000000204": ("pickup_card", "card to be picked up"),
    "4000000000000205": ("merchant_blacklist", "on the merchant's block list"),
    "4000000000000206": ("issuer_not_available", "issuer not available"),
    "4000000000000207": ("try_again_later", "try again later"),
}
DECLINED_CARD = "4000000000000002"
ZERO_DECIMAL = frozenset(
    {
        "bif",
        "clp",
        "djf",
        "gnf",
        "jpy",
        "kmf",
        "krw",
        "mga",
        "pyg",
        "rwf",
        "ugx",
        "vnd",
        "vuv",
        "xaf",
        "xof",
        "xpf",
    }
)


@dataclass(frozen=True, slots=True)
class Changed:
    """What a change did: the session after it, and the events to send once committed."""

    session: SimCSession
    intent: SimCPaymentIntent | None
    sent: list[Notification] = field(default_factory=list)


def _line_item(body: JsonObject) -> tuple[str, int, str]:
    """(currency, amount_total, product name) of the one line item with inline price_data."""
    items = body.get("line_items")
    if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], dict):
        raise SimCWireError(400, "Give exactly one line item.", param="line_items")
    item = items[0]
    price = item.get("price_data")
    if not isinstance(price, dict):
        raise SimCWireError(
            400, "Missing required param: line_items[0][price_data].", param="line_items[0][price_data]"
        )
    currency = price.get("currency")
    if not isinstance(currency, str) or exponent(currency.upper()) is None or currency != currency.lower():
        raise SimCWireError(400, "Invalid currency.", param="line_items[0][price_data][currency]")
    unit = integer(price.get("unit_amount"), "line_items[0][price_data][unit_amount]", minimum=1)
    quantity = integer(item.get("quantity", "1"), "line_items[0][quantity]", minimum=1)
    product = price.get("product_data")
    name = product.get("name") if isinstance(product, dict) else None
    if not isinstance(name, str) or not name or len(name) > 250:
        raise SimCWireError(
            400,
            "Missing required param: product_data[name].",
            param="line_items[0][price_data][product_data][name]",
        )
    return currency, unit * quantity, name


async def create(conn: AsyncConnection, clock: Clock, owner: str, body: JsonObject) -> SimCSession:
    now = clock.now()
    if body.get("mode") != "payment":
        raise SimCWireError(400, "Only mode=payment is simulated.", param="mode")
    currency, amount, name = _line_item(body)
    expires_at = now + DEFAULT_LIFETIME
    if body.get("expires_at") is not None:
        expires_at = datetime.fromtimestamp(integer(body.get("expires_at"), "expires_at"), now.tzinfo)
        if not now + SHORTEST - timedelta(seconds=5) <= expires_at <= now + LONGEST:
            raise SimCWireError(
                400,
                "The `expires_at` timestamp must be between 30 minutes and 24 hours "
                "from Checkout Session creation.",
                param="expires_at",
            )
    intent_data = body.get("payment_intent_data")
    capture_method = intent_data.get("capture_method") if isinstance(intent_data, dict) else None
    if capture_method not in (None, "automatic", "manual"):
        # Stripe also has automatic_async; the simulator holds (manual) or captures at once.
        raise SimCWireError(
            400,
            "Invalid payment_intent_data[capture_method]: must be one of automatic or manual",
            param="payment_intent_data[capture_method]",
        )
    session = SimCSession(
        id=new_object_id("cs_test_", 58),
        owner=owner,
        status="open",
        payment_status="unpaid",
        amount_total=amount,
        currency=currency,
        client_reference_id=text(body, "client_reference_id", limit=200),
        payment_intent_id=None,
        success_url=text(body, "success_url", required=True) or "",
        cancel_url=text(body, "cancel_url"),
        product_name=name,
        metadata=dict(string_map(body.get("metadata"), "metadata")),
        intent_metadata=dict(
            string_map(
                intent_data.get("metadata") if isinstance(intent_data, dict) else None,
                "payment_intent_data[metadata]",
            )
        ),
        capture_method=capture_method or "automatic",
        expires_at=expires_at,
        created_at=now,
    )
    await repository.insert_session(conn, session)
    return session


async def read(
    conn: AsyncConnection, owner: str, session_id: str
) -> tuple[SimCSession, SimCPaymentIntent | None]:
    session = await repository.session_of(conn, session_id, owner=owner)
    if session is None:
        raise missing("checkout.session", session_id, "session")
    intent = None
    if session.payment_intent_id is not None:
        intent = await repository.intent_of(conn, session.payment_intent_id, owner=owner)
    return session, intent


def _event_object(session: SimCSession, now: datetime, public_url: str) -> JsonObject:
    return session_body(session, now, public_url)


async def expire(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, session_id: str
) -> Changed:
    """Stop an open session; a 400 once it is complete or expired."""
    now = clock.now()
    session = await repository.session_of(conn, session_id, owner=owner, for_update=True)
    if session is None:
        raise missing("checkout.session", session_id, "session")
    if session.status != "open":
        raise SimCWireError(
            400,
            'Only Checkout Sessions with a status in ["open"] can be expired. '
            f'This Checkout Session has a status of "{session.status}".',
        )
    return await _end(conn, public_url, session, now)


async def _end(conn: AsyncConnection, public_url: str, session: SimCSession, now: datetime) -> Changed:
    """Mark ``session`` expired (and its declined intent canceled), with its event."""
    await repository.update_session(
        conn,
        session.id,
        status="expired",
        payment_status="unpaid",
        payment_intent_id=session.payment_intent_id,
    )
    ended = replace(session, status="expired")
    intent = None
    if session.payment_intent_id is not None:
        intent = await repository.intent_of(conn, session.payment_intent_id, owner=session.owner)
        if intent is not None and intent.status == "requires_payment_method":
            intent = replace(intent, status="canceled")
            await repository.upsert_intent(conn, intent, new=False)
    sent = await events.enqueue(
        conn, public_url, ended, "checkout.session.expired", _event_object(ended, now, public_url), now
    )
    return Changed(ended, intent, [sent] if sent else [])


async def choose(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    session_id: str,
    outcome: str,
    card: str = DECLINED_CARD,
) -> Changed | None:
    """The buyer's button on the page (the page carries no credentials: the session id is its
    key). approve: paid; reject: declined with ``card``'s code, the session stays open for
    another try; pending: complete but processing until the settle control, whose reject then
    reports ``card``'s code; cancel: nothing changes."""
    failure = TEST_CARDS.get(card, TEST_CARDS[DECLINED_CARD])[0]
    now = clock.now()
    session = await repository.session_of(conn, session_id, owner=None, for_update=True)
    if session is None:
        return None
    if session.status_at(now) != "open" or outcome == "cancel":
        return Changed(session, None)
    intent = None
    if session.payment_intent_id is not None:
        intent = await repository.intent_of(conn, session.payment_intent_id, owner=session.owner)
    new = intent is None
    if intent is None:
        intent = SimCPaymentIntent(
            id=new_object_id("pi_"),
            owner=session.owner,
            session_id=session.id,
            status="requires_payment_method",
            amount=session.amount_total,
            amount_received=0,
            amount_refunded=0,
            currency=session.currency,
            latest_charge=None,
            decline_code=None,
            metadata=session.intent_metadata,
            capture_method=session.capture_method,
            amount_capturable=0,
            capture_before=None,
            canceled_at=None,
            cancellation_reason=None,
            created_at=now,
        )
    charge = new_object_id("ch_")
    held = False
    if outcome == "approve" and session.capture_method == "manual":
        # Authorized and held: nothing received until captured (holds.py), unpaid until then.
        intent = holds.authorized(intent, charge, now)
        status, paid, kind, held = "complete", "unpaid", "checkout.session.completed", True
    elif outcome == "approve":
        intent = replace(
            intent, status="succeeded", amount_received=intent.amount, latest_charge=charge, decline_code=None
        )
        status, paid, kind = "complete", "paid", "checkout.session.completed"
    elif outcome == "pending":
        # The failure it will report is kept, unseen until it fails (render shows it then).
        intent = replace(intent, status="processing", latest_charge=charge, decline_code=failure)
        status, paid, kind = "complete", "unpaid", "checkout.session.completed"
    else:  # reject: a declined card; the buyer may try again on the same page
        intent = replace(intent, status="requires_payment_method", latest_charge=charge, decline_code=failure)
        status, paid, kind = "open", "unpaid", None
    await repository.upsert_intent(conn, intent, new=new)
    await repository.update_session(
        conn, session.id, status=status, payment_status=paid, payment_intent_id=intent.id
    )
    after = replace(session, status=status, payment_status=paid, payment_intent_id=intent.id)
    sent = []
    if kind is not None:
        sent.append(
            await events.enqueue(conn, public_url, after, kind, _event_object(after, now, public_url), now)
        )
    if held:
        sent.append(
            await events.enqueue(
                conn, public_url, after, "payment_intent.amount_capturable_updated", intent_body(intent), now
            )
        )
    return Changed(after, intent, [event for event in sent if event is not None])


async def sessions_for(conn: AsyncConnection, owner: str, client_reference_id: str) -> list[SimCSession]:
    """``owner``'s sessions made for payorch's intent ``client_reference_id``."""
    return await repository.list_sessions(
        conn,
        owner,
        payment_intent=None,
        client_reference_id=client_reference_id,
        limit=20,
        starting_after=None,
    )


def success_url(session: SimCSession) -> str:
    return session.success_url.replace("{CHECKOUT_SESSION_ID}", session.id)


async def settle(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, client_reference_id: str, outcome: str
) -> Changed | None:
    """The settle control: the processing payment of ``owner``'s session for
    ``client_reference_id`` (payorch's intent id) succeeds (approve) or fails (reject)."""
    now = clock.now()
    found = await sessions_for(conn, owner, client_reference_id)
    for session in found:
        if session.payment_intent_id is None:
            continue
        intent = await repository.intent_of(conn, session.payment_intent_id, owner=owner, for_update=True)
        if intent is None or intent.status != "processing":
            continue
        held = outcome == "approve" and intent.capture_method == "manual"
        if held:
            intent = holds.authorized(intent, intent.latest_charge or new_object_id("ch_"), now)
            paid, kind = "unpaid", "checkout.session.async_payment_succeeded"
        elif outcome == "approve":
            intent = replace(intent, status="succeeded", amount_received=intent.amount)
            paid, kind = "paid", "checkout.session.async_payment_succeeded"
        else:
            failed = intent.decline_code or "generic_decline"
            intent = replace(intent, status="requires_payment_method", decline_code=failed)
            paid, kind = "unpaid", "checkout.session.async_payment_failed"
        await repository.upsert_intent(conn, intent, new=False)
        await repository.update_session(
            conn, session.id, status="complete", payment_status=paid, payment_intent_id=intent.id
        )
        after = replace(session, status="complete", payment_status=paid)
        sent = [
            await events.enqueue(conn, public_url, after, kind, _event_object(after, now, public_url), now)
        ]
        if held:
            sent.append(
                await events.enqueue(
                    conn,
                    public_url,
                    after,
                    "payment_intent.amount_capturable_updated",
                    intent_body(intent),
                    now,
                )
            )
        return Changed(after, intent, [event for event in sent if event is not None])
    return None


async def send_again(
    conn: AsyncConnection, clock: Clock, owner: str, client_reference_id: str, copies: int
) -> list[Notification]:
    """Every event already sent about ``owner``'s sessions for ``client_reference_id``, ``copies``
    times more (duplicates, as the provider's retries deliver them). An event is one event
    however many deliveries it had (the rows of earlier sends again)."""
    now = clock.now()
    found = await sessions_for(conn, owner, client_reference_id)
    sent: list[Notification] = []
    seen: set[object] = set()
    for session in found:
        for event in await outbox.notifications_about(conn, events.NOTIFIER.provider, owner, session.id):
            if event.body.get("id") in seen:
                continue
            seen.add(event.body.get("id"))
            for _ in range(copies):
                sent.append(await write.again(conn, event, now))
    return sent


def expanded(
    session: SimCSession, intent: SimCPaymentIntent | None, now: datetime, public_url: str
) -> JsonObject:
    body = session_body(session, now, public_url)
    if intent is not None:
        body["payment_intent"] = intent_body(intent.as_seen(now))
    return body
