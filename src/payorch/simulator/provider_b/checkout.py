"""Provider B's checkout, as the buyer sees it: what the page shows, the buyer's button, and the
address (and query) back to the shop. In the caller's transaction; never commits."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.simulator.outbox.records import Notification
from payorch.simulator.provider_b import notify, repository
from payorch.simulator.provider_b.payments import authorization_code
from payorch.simulator.provider_b.records import SimBPayment, SimBPreference
from payorch.simulator.provider_b.wire import SITE_ID, collector_of, json_object

OUTCOMES = ("approve", "reject", "pending", "review", "cancel")
# payment fields per outcome: status, status_detail, payment_type_id, payment_method_id
_RESULTS = {
    "approve": ("approved", "accredited", "credit_card", "visa"),
    "reject": ("rejected", "cc_rejected_other_reason", "credit_card", "master"),
    "pending": ("pending", "pending_waiting_payment", "ticket", "servipag"),
    # A card payment held for the provider's manual review (up to two business days).
    "review": ("in_process", "pending_review_manual", "credit_card", "visa"),
}
# A rejection's status_detail by test cardholder name, as Mercado Pago's test cards choose it
# (OTHE, CALL, FUND, SECU, EXPI, FORM, CARD, INST, DUPL, LOCK, ATTE, BLAC); the others are the
# simulator's own, so that every rejection payorch documents can be made (ERRO: the provider
# could not process the card; HIGH, RISK: its fraud prevention; BANK: the bank refused).
CARDHOLDER_NAMES = {
    "OTHE": ("cc_rejected_other_reason", "declined"),
    "FUND": ("cc_rejected_insufficient_amount", "insufficient funds"),
    "SECU": ("cc_rejected_bad_filled_security_code", "wrong security code"),
    "BLAC": ("cc_rejected_blacklist", "block list (fraud)"),
    "ERRO": ("cc_rejected_card_error", "provider error"),
    "CALL": ("cc_rejected_call_for_authorize", "authorize with the issuer"),
    "EXPI": ("cc_rejected_bad_filled_date", "wrong expiration date"),
    "FORM": ("cc_rejected_bad_filled_other", "wrong card details"),
    "CARD": ("cc_rejected_bad_filled_card_number", "wrong card number"),
    "INST": ("cc_rejected_invalid_installments", "installments not accepted"),
    "DUPL": ("cc_rejected_duplicated_payment", "duplicated payment"),
    "LOCK": ("cc_rejected_card_disabled", "card disabled"),
    "ATTE": ("cc_rejected_max_attempts", "too many attempts"),
    "HIGH": ("cc_rejected_high_risk", "fraud prevention (card)"),
    "RISK": ("rejected_high_risk", "fraud prevention"),
    "BANK": ("rejected_by_bank", "the bank refused"),
}


@dataclass(frozen=True, slots=True)
class PageState:
    preference: SimBPreference
    payments: list[SimBPayment]

    @property
    def settled(self) -> SimBPayment | None:
        """A payment that ends this checkout (approved or waiting): the page cannot pay again."""
        for payment in reversed(self.payments):
            if payment.status in ("approved", "pending", "in_process", "refunded"):
                return payment
        return None


async def page_state(conn: AsyncConnection, preference_id: str) -> PageState | None:
    preference = await repository.get_preference(conn, preference_id)
    if preference is None:
        return None
    return PageState(preference, await repository.payments_of_preference(conn, preference_id))


@dataclass(frozen=True, slots=True)
class Choice:
    state: PageState
    payment: SimBPayment | None  # None: cancelled (or the checkout was already settled / expired)
    outcome: str
    notifications: list[Notification] = field(default_factory=list)  # to send once committed


async def choose(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    preference_id: str,
    outcome: str,
    cardholder_name: str = "OTHE",
) -> Choice | None:
    """The buyer's button: a payment for approve/reject/pending, nothing for cancel. A rejection's
    ``status_detail`` is the test cardholder name's (CARDHOLDER_NAMES)."""
    now = clock.now()
    # Locked: two buttons pressed at once (two tabs) must not both pay the checkout.
    preference = await repository.get_preference(conn, preference_id, for_update=True)
    if preference is None:
        return None
    state = PageState(preference, await repository.payments_of_preference(conn, preference_id))
    if state.settled is not None:
        return Choice(state, state.settled, "settled")
    if outcome == "cancel" or preference.is_expired(now):
        return Choice(state, None, "cancel")
    status, detail, kind, method = _RESULTS[outcome]
    if outcome == "reject":
        detail = CARDHOLDER_NAMES.get(cardholder_name, (detail, ""))[0]
    items = preference.body.get("items")
    first = json_object(items[0]) if isinstance(items, list) and items else {}
    title = first.get("title")
    notification_url = preference.body.get("notification_url")
    payment = SimBPayment(
        id=secrets.randbelow(9 * 10**10) + 10**10,
        owner=preference.owner,
        preference_id=preference.id,
        collector_id=collector_of(preference.owner),
        # One merchant order per preference collects all its payment attempts.
        merchant_order_id=(
            state.payments[0].merchant_order_id if state.payments else secrets.randbelow(9 * 10**10) + 10**10
        ),
        external_reference=preference.external_reference,
        description=title if isinstance(title, str) else None,
        status=status,
        status_detail=detail,
        payment_type_id=kind,
        payment_method_id=method,
        currency_id=preference.currency_id,
        amount_hundredths=preference.amount_hundredths,
        refunded_hundredths=0,
        authorization_code=authorization_code() if status == "approved" else None,
        notification_url=notification_url if isinstance(notification_url, str) else None,
        date_created=now,
        date_approved=now if status == "approved" else None,
        date_last_updated=now,
    )
    await repository.insert_payment(conn, payment)
    notifications = []
    if status in ("approved", "rejected"):
        sent = await notify.enqueue(conn, public_url, payment, "payment.created", now)
        notifications = [sent] if sent else []
    return Choice(state, payment, outcome, notifications)


def back_params(preference: SimBPreference, payment: SimBPayment | None) -> dict[str, str]:
    """The query parameters of the return to a back URL (``null`` when the buyer did not pay)."""
    if payment is None:
        paid: dict[str, str] = dict.fromkeys(
            (
                "collection_id",
                "collection_status",
                "payment_id",
                "status",
                "payment_type",
                "merchant_order_id",
            ),
            "null",
        )
    else:
        paid = {
            "collection_id": str(payment.id),
            "collection_status": payment.status,
            "payment_id": str(payment.id),
            "status": payment.status,
            "payment_type": payment.payment_type_id,
            "merchant_order_id": str(payment.merchant_order_id),
        }
    return {
        "collection_id": paid["collection_id"],
        "collection_status": paid["collection_status"],
        "payment_id": paid["payment_id"],
        "status": paid["status"],
        "external_reference": preference.external_reference or "null",
        "payment_type": paid["payment_type"],
        "merchant_order_id": paid["merchant_order_id"],
        "preference_id": preference.id,
        "site_id": SITE_ID,
        "processing_mode": "aggregator",
        "merchant_account_id": "null",
    }


def back_url(preference: SimBPreference, payment: SimBPayment | None) -> str | None:
    urls = json_object(preference.body.get("back_urls"))
    status = payment.status if payment is not None else None
    wanted = {
        "approved": "success",
        "refunded": "success",
        "pending": "pending",
        "in_process": "pending",
    }.get(status or "", "failure")
    for name in (wanted, "success", "failure", "pending"):
        if urls.get(name):
            return str(urls[name])
    return None


# The page's button for each market outcome (docs/simulator.md, "The simulated market").
MARKET_BUTTONS = {"approve": "approve", "decline": "reject", "give_up": "cancel", "pending": "pending"}


async def open_preference(
    conn: AsyncConnection, clock: Clock, owner: str, payment_intent_id: str
) -> SimBPreference | None:
    """The intent's newest preference whose page can still be paid (none settled, not expired)."""
    for preference_id in await repository.preference_ids_for_reference(conn, owner, payment_intent_id):
        state = await page_state(conn, preference_id)
        if state is not None and state.settled is None and not state.preference.is_expired(clock.now()):
            return state.preference
    return None
