"""Provider B for the conformance kit (simulator/conformance.py): its return shapes (the browser
controls every field), its notices (signed webhook and unsigned IPN, on the payment and the
merchant-order topics), its books, its statuses."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Literal

import httpx

from payorch.crypto import Cipher
from payorch.providers.base import CheckoutRef, ConnectorContext, PaymentResult
from payorch.providers.provider_b import decline_codes, wire
from payorch.providers.provider_b.payment_results import result_of
from payorch.providers.provider_b.registration import REGISTRATION
from payorch.providers.provider_b.signature import sign_notification
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
    query_of,
    read_books,
)
from payorch.simulator.provider_b.checkout import CARDHOLDER_NAMES

_BASE = f"/simulator/{REGISTRATION.simulator_name}"
_METHODS: tuple[Literal["GET", "POST"], ...] = ("GET", "POST")
_UNKNOWN_PAYMENT = "12345678901"  # an id the provider never gave
# What a return can say about an unpaid payment, field by field.
_SAYS_UNPAID = {
    "rejected": {"status": "rejected", "collection_status": "rejected"},
    "pending": {"status": "pending", "collection_status": "pending"},
    "in_process": {"status": "in_process", "collection_status": "in_process"},
    "null": {"status": wire.NULL, "collection_status": wire.NULL},
    "null_payment": {"status": wire.NULL, "payment_id": wire.NULL, "collection_id": wire.NULL},
    "rejected_null_payment": {"status": "rejected", "payment_id": wire.NULL, "collection_id": wire.NULL},
}
_STATUSES = (
    wire.APPROVED,
    wire.PENDING,
    wire.IN_PROCESS,
    wire.AUTHORIZED,
    wire.IN_MEDIATION,
    wire.REJECTED,
    wire.CANCELLED,
    wire.REFUNDED,
    wire.CHARGED_BACK,
)


def _genuine(visit: Visit) -> dict[str, str]:
    """The return's fields the provider gave the buyer, or (no trip back yet) the page's own."""
    if visit.returned_to is not None:
        return {k: v for k, v in query_of(visit.returned_to).items() if k != "payment_intent_id"}
    preference = query_of(visit.checkout_url)["pref_id"]
    return {"preference_id": preference, "external_reference": visit.payment_intent_id}


async def _payments(http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> list[dict[str, object]]:
    token = REGISTRATION.mock_credentials(cipher, visit.application_id)["access_token"]
    params, headers = {"external_reference": visit.payment_intent_id}, {"Authorization": f"Bearer {token}"}
    found = await read_books(http, f"{_BASE}{wire.PAYMENTS_SEARCH}", headers=headers, params=params)
    return list(found["results"])


class ProviderBDriver:
    # USD, not CLP: the kit charges what each provider declares.
    charges = Charges("USD", amount=1500, part=500)
    page_outcomes: frozenset[PageOutcome] = frozenset({"approve", "reject", "pending", "cancel"})
    decline_retries_on_page = False  # the return says rejected: FAILED is final

    async def returns(
        self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit, *, claims_paid: bool
    ) -> list[ForgedReturn]:
        genuine = _genuine(visit)
        if claims_paid:
            approved = {"status": wire.APPROVED, "collection_status": wire.APPROVED}
            says = {
                "approved": approved,
                "approved_unknown_payment": {
                    **approved,
                    "payment_id": _UNKNOWN_PAYMENT,
                    "collection_id": _UNKNOWN_PAYMENT,
                },
                "approved_null_payment": {**approved, "payment_id": wire.NULL, "collection_id": wire.NULL},
            }
        else:
            says = _SAYS_UNPAID
        return [
            ForgedReturn(f"{label}/{method}", method, {**genuine, **changes})
            for label, changes in says.items()
            for method in _METHODS
        ]

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
        claim = wire.APPROVED if claims_paid else wire.REJECTED
        ts = int(now.timestamp())
        payments = await _payments(http, cipher, visit)
        named = [(str(p["id"]), str(p.get("merchant_order_id") or "")) for p in payments]
        forged: list[ForgedNotification] = []
        for payment_id, order_id in named or [(_UNKNOWN_PAYMENT, "")]:
            data = {"id": payment_id, "status": claim}
            body = {"type": wire.TOPIC_PAYMENT, "action": "payment.updated", "data": data}
            forged.append(
                ForgedNotification(
                    f"webhook/payment/{claim}",
                    {"data.id": payment_id, "type": wire.TOPIC_PAYMENT},
                    _signed(key, payment_id, ts),
                    json.dumps(body).encode(),
                    signed=True,
                )
            )
            forged.append(
                ForgedNotification(
                    "ipn/payment", {"topic": wire.TOPIC_PAYMENT, "id": payment_id}, {}, b"", signed=False
                )
            )
            if order_id:
                order_body = {"type": wire.WEBHOOK_MERCHANT_ORDER, "data": {"id": order_id, "status": claim}}
                forged.append(
                    ForgedNotification(
                        "webhook/merchant_order",
                        {"data.id": order_id, "type": wire.WEBHOOK_MERCHANT_ORDER},
                        _signed(key, order_id, ts),
                        json.dumps(order_body).encode(),
                        signed=True,
                    )
                )
        return forged

    async def refunded(self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> int:
        currency = REGISTRATION.adapter.supported_currencies
        total = 0
        for payment in await _payments(http, cipher, visit):
            refunded = Decimal(str(payment.get("transaction_amount_refunded") or 0))
            code = str(payment.get("currency_id"))
            minor = wire.to_minor(refunded, code) if code in currency else None
            total += minor or 0
        return total

    async def money(self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> Money:
        """Checkout Pro captures what it approves: never held."""
        taken = 0
        for payment in await _payments(http, cipher, visit):
            code = str(payment.get("currency_id"))
            if payment.get("status") != "approved" or code not in REGISTRATION.adapter.supported_currencies:
                continue
            amount = Decimal(str(payment.get("transaction_amount") or 0))
            refunded = Decimal(str(payment.get("transaction_amount_refunded") or 0))
            taken += wire.to_minor(amount - refunded, code) or 0
        return Money(held=0, taken=taken)

    def status_cases(self, ctx: ConnectorContext, checkout: CheckoutRef) -> list[StatusCase]:
        return [StatusCase(status, _reader(ctx, checkout, status)) for status in _STATUSES]

    def unknown_status(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        return _reader(ctx, checkout, "payorch_unknown")()

    declines_not_simulated: Mapping[str, str] = {
        "by_payer": "the simulated page's cancel makes no payment, so none is cancelled by the payer",
    }

    def documented_declines(self) -> Mapping[str, Documented]:
        return {detail: Documented(detail, row[0]) for detail, row in decline_codes.STATUS_DETAILS.items()}

    def decline_cases(self) -> list[DeclineCase]:
        # A rejection's detail is the test cardholder name's; a payment left pending, then
        # cancelled by the provider (the settle control), is cancelled "expired".
        rejected = [
            DeclineCase(detail, "reject", {"cardholder_name": name})
            for name, (detail, _) in CARDHOLDER_NAMES.items()
        ]
        return [*rejected, DeclineCase("expired", "pending", settle="cancel")]


def _signed(secret: str, data_id: str, ts: int) -> dict[str, str]:
    request_id = f"req-{data_id}"
    signature = sign_notification(secret, data_id=data_id, request_id=request_id, ts=ts)
    return {"x-signature": signature, "x-request-id": request_id}


def _reader(ctx: ConnectorContext, checkout: CheckoutRef, status: str) -> Callable[[], PaymentResult]:
    payment = wire.ProviderBPayment(
        id="1",
        status=status,
        external_reference=checkout.payment_intent_id,
        transaction_amount=Decimal(wire.to_major(checkout.amount, checkout.currency)),
        currency_id=checkout.currency,
    )
    return lambda: result_of(ctx, payment, checkout.currency)


DRIVER = ProviderBDriver()
