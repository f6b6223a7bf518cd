"""Provider D for the conformance kit (simulator/conformance.py): its books are read where its
Customer Area shows them (Adyen has no call to read a payment)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import httpx
import orjson

from payorch.crypto import Cipher
from payorch.providers.base import CheckoutRef, ConnectorContext, PaymentResult
from payorch.providers.provider_d import decline_codes, wire
from payorch.providers.provider_d.payment_results import from_session, reference_of
from payorch.providers.provider_d.registration import REGISTRATION
from payorch.simulator import conformance as kit
from payorch.simulator.provider_d import notify
from payorch.simulator.provider_d.notify import signature
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import BASE, new_psp

_STATUSES = (wire.ACTIVE, wire.COMPLETED, wire.PAYMENT_PENDING, wire.REFUSED, wire.CANCELED, wire.EXPIRED)


async def _books(http: httpx.AsyncClient, cipher: Cipher, visit: kit.Visit) -> dict[str, Any]:
    key = REGISTRATION.mock_credentials(cipher, visit.application_id)["api_key"]
    path = f"{BASE}/customer-area/sessions/{visit.page_key}"
    return dict(await kit.read_books(http, path, headers={"X-API-Key": key}))


class ProviderDDriver:
    charges = kit.Charges("EUR", amount=1000, part=300)
    page_outcomes: frozenset[kit.PageOutcome] = frozenset({"approve", "reject", "cancel"})
    decline_retries_on_page = False  # the page sends the buyer back after a refusal

    async def returns(
        self, http: httpx.AsyncClient, cipher: Cipher, visit: kit.Visit, *, claims_paid: bool
    ) -> list[kit.ForgedReturn]:
        # One shape whatever it claims: the genuine sessionResult if the buyer came back, else forged.
        genuine = kit.query_of(visit.returned_to)
        session_result = genuine.get("sessionResult", "X3Xforged!")
        params = {"sessionId": visit.page_key, "sessionResult": session_result}
        return [kit.ForgedReturn("returnUrl", "GET", params)]

    async def notifications(
        self, http: httpx.AsyncClient, cipher: Cipher, visit: kit.Visit, *, claims_paid: bool,
        secret: str | None, now: datetime,
    ) -> list[kit.ForgedNotification]:
        mock = REGISTRATION.mock_credentials(cipher, visit.application_id)
        key = secret or mock["hmac_key"]
        key = key if all(c in "0123456789abcdefABCDEF" for c in key) else key.encode().hex()
        books, request = await _books(http, cipher, visit), {"merchantAccount": mock["merchant_account"]}
        session = SimDSession(visit.page_key, "", "", 0, books["currency"], False, None,
                              {**request, "reference": books["reference"]}, now, now)
        item = notify.item(session, wire.AUTHORISATION, books["psp"] or new_psp(), self.charges.amount,
                           success=claims_paid, now=now, reason="" if claims_paid else "Refused")
        item["additionalData"] = {"checkoutSessionId": session.id, "hmacSignature": signature(item, key)}
        body = orjson.dumps({"live": "false", "notificationItems": [{"NotificationRequestItem": item}]})
        return [kit.ForgedNotification("AUTHORISATION", {}, {}, body, signed=True)]

    async def refunded(self, http: httpx.AsyncClient, cipher: Cipher, visit: kit.Visit) -> int:
        return int((await _books(http, cipher, visit))["refunded"])

    async def money(self, http: httpx.AsyncClient, cipher: Cipher, visit: kit.Visit) -> kit.Money:
        books = await _books(http, cipher, visit)
        if books["payment"] == "authorised":
            return kit.Money(held=int(books["held"]), taken=0)
        taken = int(books["captured"]) - int(books["refunded"]) if books["payment"] == "captured" else 0
        return kit.Money(held=0, taken=taken)

    def status_cases(self, ctx: ConnectorContext, checkout: CheckoutRef) -> list[kit.StatusCase]:
        read, statuses = (lambda *at: _reader(ctx, checkout, *at)), {s: s for s in _STATUSES}
        return kit.status_grid(read, statuses, {"unpaid": False, "paid": True})

    def unknown_status(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        return _reader(ctx, checkout, "payorch_unknown", False)()

    declines_not_simulated: Mapping[str, str] = {}

    def documented_declines(self) -> Mapping[str, kit.Documented]:
        return {code: kit.Documented(code, ours) for code, (_, ours) in decline_codes.REASONS.items()}

    def decline_cases(self) -> list[kit.DeclineCase]:
        # The page's Refuse button with the refusal reason picked in its select.
        return [kit.DeclineCase(code, "reject", {"reason": code}) for code in decline_codes.REASONS]


def _reader(
    ctx: ConnectorContext, checkout: CheckoutRef, status: str, paid: bool
) -> Callable[[], PaymentResult]:
    amount = wire.Amount(value=checkout.amount, currency=checkout.currency)
    payment = wire.SessionPayment(psp_reference="CONFORMANCE00001", result_code="Authorised", amount=amount)
    reference = reference_of(checkout.payment_intent_id, checkout.checkout_id)
    session = wire.SessionResult(
        id=checkout.provider_reference, status=status, reference=reference, payments=[payment] if paid else []
    )
    return lambda: from_session(session, [], checkout, ctx.clock.now())


DRIVER = ProviderDDriver()
