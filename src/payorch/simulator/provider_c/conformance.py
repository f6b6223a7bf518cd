"""Provider C for the conformance kit (simulator/conformance.py): its two ways back (success_url
with the session id, cancel_url with our checkout id), its signed session events, its books,
its session and PaymentIntent statuses. A decline keeps the buyer on its page."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

import httpx

from payorch.crypto import Cipher
from payorch.providers.base import CheckoutRef, ConnectorContext, PaymentResult
from payorch.providers.payment_errors import PaymentErrorCode
from payorch.providers.provider_c import decline_codes, wire
from payorch.providers.provider_c.payment_results import result_of
from payorch.providers.provider_c.registration import REGISTRATION
from payorch.providers.provider_c.signature import sign
from payorch.simulator.conformance import (
    Charges,
    DeclineCase,
    Documented,
    ForgedNotification,
    ForgedReturn,
    Money,
    PageOutcome,
    StatusCase,
    Visit,
    read_books,
    status_grid,
)
from payorch.simulator.provider_c.sessions import TEST_CARDS

_BASE = f"/simulator/{REGISTRATION.simulator_name}"
_METHODS: tuple[Literal["GET", "POST"], ...] = ("GET", "POST")
_PAID_EVENTS = ("checkout.session.completed", "checkout.session.async_payment_succeeded")
_UNPAID_EVENTS = ("checkout.session.expired", "checkout.session.async_payment_failed")
_INTENT_STATUSES: tuple[str | None, ...] = (
    None,
    wire.REQUIRES_PAYMENT_METHOD,
    wire.REQUIRES_CONFIRMATION,
    wire.REQUIRES_ACTION,
    wire.PROCESSING,
    wire.REQUIRES_CAPTURE,
    wire.SUCCEEDED,
    wire.CANCELED,
)


async def _get(http: httpx.AsyncClient, cipher: Cipher, visit: Visit, path: str, **params: str) -> object:
    key = REGISTRATION.mock_credentials(cipher, visit.application_id)["secret_key"]
    return await read_books(http, _BASE + path, headers={"Authorization": f"Bearer {key}"}, params=params)


async def _session(http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> dict[str, object]:
    path = f"{wire.SESSIONS}/{visit.page_key}"
    found = await _get(http, cipher, visit, path, **{"expand[]": "payment_intent"})
    assert isinstance(found, dict)
    return found


class ProviderCDriver:
    # MXN, not CLP: the kit charges what each provider declares.
    charges = Charges("MXN", amount=1500, part=500)
    page_outcomes: frozenset[PageOutcome] = frozenset({"approve", "reject", "pending", "cancel"})
    decline_retries_on_page = True

    async def returns(
        self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit, *, claims_paid: bool
    ) -> list[ForgedReturn]:
        if claims_paid:  # success_url: "I finished"
            params = {"session_id": visit.page_key}
            return [ForgedReturn(f"success/{m}", m, params) for m in _METHODS]
        cancel_url = str((await _session(http, cipher, visit))["cancel_url"])
        params = dict(parse_qsl(urlsplit(cancel_url).query))
        params.pop("payment_intent_id", None)
        return [ForgedReturn(f"cancel/{m}", m, params) for m in _METHODS]

    async def notifications(
        self,
        http: httpx.AsyncClient,
        cipher: Cipher,
        visit: Visit,
        *,
        claims_paid: bool,
        secret: str | None,
        now: datetime,
    ) -> list[ForgedNotification]:
        key = secret or REGISTRATION.mock_credentials(cipher, visit.application_id)["webhook_secret"]
        claimed = {
            "id": visit.page_key,
            "object": "checkout.session",
            "status": wire.COMPLETE if claims_paid else wire.EXPIRED,
            "payment_status": wire.PAID if claims_paid else wire.UNPAID,
            "client_reference_id": visit.payment_intent_id,
        }
        forged = []
        for number, kind in enumerate(_PAID_EVENTS if claims_paid else _UNPAID_EVENTS):
            event = {"id": f"evt_conformance{number}", "object": "event", "type": kind}
            body = json.dumps({**event, "data": {"object": claimed}}).encode()
            headers = {"Stripe-Signature": sign(key, body, int(now.timestamp()))}
            forged.append(ForgedNotification(kind, {}, headers, body, signed=True))
        return forged

    async def refunded(self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> int:
        intent = (await _session(http, cipher, visit)).get("payment_intent")
        if not isinstance(intent, dict):
            return 0
        listed = await _get(http, cipher, visit, wire.REFUNDS, payment_intent=str(intent["id"]), limit="100")
        assert isinstance(listed, dict)
        done = (wire.REFUND_SUCCEEDED, wire.REFUND_PENDING)
        return sum(int(r["amount"]) for r in listed["data"] if r.get("status") in done)

    async def money(self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> Money:
        intent = (await _session(http, cipher, visit)).get("payment_intent")
        if not isinstance(intent, dict):
            return Money(held=0, taken=0)
        if intent.get("status") == wire.REQUIRES_CAPTURE:
            return Money(held=int(intent["amount_capturable"]), taken=0)
        received = int(intent.get("amount_received") or 0)
        return Money(held=0, taken=received - await self.refunded(http, cipher, visit) if received else 0)

    def status_cases(self, ctx: ConnectorContext, checkout: CheckoutRef) -> list[StatusCase]:
        sessions = {s: s for s in (wire.OPEN, wire.COMPLETE, wire.EXPIRED)}
        intents = {str(i): i for i in _INTENT_STATUSES}
        return status_grid(lambda *at: _reader(ctx, checkout, *at), sessions, intents)

    def unknown_status(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        return _reader(ctx, checkout, "payorch_unknown", wire.SUCCEEDED)()

    declines_not_simulated: Mapping[str, str] = {}

    def documented_declines(self) -> Mapping[str, Documented]:
        # Its table, and the rule for any other card error (generic_decline stands for it).
        rows = {code: Documented(code, ours) for code, ours in decline_codes.CODES.items()}
        return rows | {"generic_decline": Documented("generic_decline", PaymentErrorCode.DECLINED)}

    def decline_cases(self) -> list[DeclineCase]:
        # A decline keeps the buyer on the page (nothing ends): a payment left processing with a
        # test card, then failed by the settle control, fails with the card's code.
        return [
            DeclineCase(code, "pending", {"card": number}, settle="reject")
            for number, (code, _) in TEST_CARDS.items()
        ]


def _reader(
    ctx: ConnectorContext, checkout: CheckoutRef, status: str, intent_status: str | None
) -> Callable[[], PaymentResult]:
    paid = intent_status == wire.SUCCEEDED
    intent = (
        wire.PaymentIntent(
            id="pi_conformance",
            status=intent_status,
            amount=checkout.amount,
            amount_received=checkout.amount if paid else 0,
            currency=checkout.currency.lower(),
        )
        if intent_status is not None
        else None
    )
    session = wire.CheckoutSession(
        id=checkout.provider_reference,
        status=status,
        payment_status=wire.PAID if paid else wire.UNPAID,
        payment_intent=intent,
        amount_total=checkout.amount,
        currency=checkout.currency.lower(),
        client_reference_id=checkout.payment_intent_id,
        metadata={"checkout_id": checkout.checkout_id},
    )
    return lambda: result_of(ctx, session)


DRIVER = ProviderCDriver()
