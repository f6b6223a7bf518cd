"""Provider D's adapter alone, against a scripted provider and its words kept in memory: the
refusal table, the issuer's code in an AUTHORISATION's reason, a notification of several items
(each kept and acted on once), and a cancel followed by a late authorisation (given back)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from payorch.clock import FrozenClock
from payorch.providers import base
from payorch.providers.base import ConnectorContext, PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import PaymentErrorCode
from payorch.providers.provider_d import PROVIDER_D, decline_codes, wire
from payorch.providers.provider_d.adapter import ProviderDAdapter
from payorch.providers.provider_d.payment_results import auth_code, from_words, reference_of
from payorch.providers.words import ProviderWord, WordQuery
from tests.providers.fake_transport import FakeProvider, fake_http, reply
from tests.providers.helpers import connector_context

adapter = ProviderDAdapter()
BASE = "https://checkout-test.adyen.com/v71"
KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
MERCHANT = "PayorchTestECOM"
CHECKOUT = base.CheckoutRef(
    "pi_1", "chk_1", "CS0123456789ABCDEF", 1000, "EUR", {"reference": reference_of("pi_1", "chk_1")}
)


class Words:
    """The connector's kept words, in memory (providers/words.py's port)."""

    def __init__(self) -> None:
        self.kept: list[ProviderWord] = []

    async def record(self, word: ProviderWord) -> bool:
        key = (word.event, word.reference, word.success)
        if any((w.event, w.reference, w.success) == key for w in self.kept):
            return False
        self.kept.append(word)
        return True

    async def find(self, query: WordQuery) -> list[ProviderWord]:
        wanted = {"reference": query.reference, "original_reference": query.original_reference,
                  "merchant_reference": query.merchant_reference}
        return [
            w for w in self.kept
            if w.event in query.events and all(v is None or getattr(w, k) == v for k, v in wanted.items())
        ]


@pytest.fixture
async def fake() -> FakeProvider:
    return FakeProvider()


@pytest.fixture
async def ctx(fake: FakeProvider) -> Any:
    async with fake_http(fake) as http:
        made = connector_context(
            PROVIDER_D, mode=base.Mode.SANDBOX, base_url=BASE, http=http, clock=FrozenClock(),
            credentials={"api_key": "AQE_test", "merchant_account": MERCHANT, "hmac_key": KEY},
        )
        yield ConnectorContext(**{**made.__dict__, "words": Words()})


def item(event: str, psp: str, *, success: bool = True, reason: str = "", original: str = "") -> dict[str, Any]:
    made: dict[str, Any] = {
        "amount": {"currency": "EUR", "value": 1000},
        "eventCode": event,
        "eventDate": "2026-12-05T10:00:00+01:00",
        "merchantAccountCode": MERCHANT,
        "merchantReference": CHECKOUT.provider_data["reference"],
        "pspReference": psp,
        "reason": reason,
        "success": "true" if success else "false",
    }
    if original:
        made["originalReference"] = original
    signature = wire.signature(wire.NotificationItem.model_validate(made), KEY)
    return {**made, "additionalData": {"hmacSignature": signature}}


def notification(*items: dict[str, Any]) -> base.IncomingNotification:
    body = {"live": "false", "notificationItems": [{"NotificationRequestItem": i} for i in items]}
    return base.IncomingNotification({}, {}, json.dumps(body).encode())


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "code", "ours", "retryable"),
    [
        ("Not enough balance", "12", PaymentErrorCode.INSUFFICIENT_FUNDS, False),
        (" cvc declined ", "24", PaymentErrorCode.INVALID_CARD_DETAILS, False),
        ("Issuer Unavailable", "9", PaymentErrorCode.PROVIDER_ERROR, True),
        ("FRAUD", "20", PaymentErrorCode.FRAUD_SUSPECTED, False),
        ("Refused", "2", PaymentErrorCode.DECLINED, True),
    ],
)
def test_a_refusal_reason_maps_to_its_row(reason: str, code: str, ours: PaymentErrorCode, retryable: bool) -> None:
    failed = PaymentResult(PaymentOutcome.FAILED, details={"refusal_reason": reason})
    error = decline_codes.payment_error(failed)
    assert error is not None and (error.code, error.provider_code, error.retryable) == (ours, code, retryable)


def test_no_row_for_an_unknown_reason_or_an_outcome_that_is_not_a_refusal() -> None:
    assert decline_codes.payment_error(PaymentResult(PaymentOutcome.FAILED, details={"refusal_reason": "?"})) is None
    held = PaymentResult(PaymentOutcome.HELD, details={"refusal_reason": "Refused"})
    assert decline_codes.payment_error(held) is None
    assert {"1", "13", "30"}.isdisjoint(decline_codes.REASONS)  # results, not refusals
    assert list(decline_codes.REASONS) == sorted(decline_codes.REASONS, key=int)


# -- the issuer's code --------------------------------------------------------------------------


def test_the_authorisation_code_is_the_first_part_of_the_reason() -> None:
    def said(reason: str | None) -> ProviderWord:
        return ProviderWord("AUTHORISATION", "PSP0000000000001", True, reason=reason, amount=1000, currency="EUR",
                            merchant_reference=CHECKOUT.provider_data["reference"])

    assert auth_code(said("087330:1111:03/2030")) == "087330"
    assert auth_code(said(":1111:03/2030")) is None
    assert auth_code(said("")) is None and auth_code(said(None)) is None and auth_code(None) is None
    paid = from_words([said("087330:1111:03/2030")], CHECKOUT)
    assert (paid.outcome, paid.authorization_code) == (PaymentOutcome.AUTHORIZED, "087330")


# -- notifications ------------------------------------------------------------------------------


async def test_every_item_of_a_notification_is_kept_and_acts_once(ctx: ConnectorContext) -> None:
    authorised = item("AUTHORISATION", "PSP0000000000001", reason="087330:1111:03/2030")
    captured = item("CAPTURE", "PSP0000000000002", original="PSP0000000000001")
    refunded = item("REFUND", "PSP0000000000003", original="PSP0000000000001")
    ref = await adapter.parse_notification(ctx, notification(authorised, captured, captured, refunded))
    acted = [ref, *ref.more]
    assert [r.topic for r in acted] == ["AUTHORISATION", "CAPTURE", "REFUND"]  # the repeated item once
    assert [r.provider_payment_reference for r in acted] == ["PSP0000000000001"] * 3
    assert acted[0].payment_intent_id == "pi_1" and acted[0].checkout_id == "chk_1"
    assert (acted[1].hold, acted[1].refund, acted[2].hold, acted[2].refund) == (True, False, False, True)
    assert all(not r.more for r in acted[1:])
    words = ctx.words
    assert isinstance(words, Words) and [w.event for w in words.kept] == ["AUTHORISATION", "CAPTURE", "REFUND"]
    again = await adapter.parse_notification(ctx, notification(captured))  # the provider sends it again
    assert again.topic == "CAPTURE" and len(words.kept) == 3


async def test_one_item_that_does_not_verify_refuses_the_whole_notification(ctx: ConnectorContext) -> None:
    forged = {**item("AUTHORISATION", "PSP0000000000009"), "success": "false"}
    with pytest.raises(base.InvalidNotification):
        await adapter.parse_notification(ctx, notification(item("CAPTURE", "PSP0000000000002"), forged))
    words = ctx.words
    assert isinstance(words, Words) and words.kept == []


async def test_cancel_answers_not_paid_and_a_later_authorisation_is_given_back(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    stopped = await adapter.cancel_checkout(ctx, CHECKOUT)
    assert stopped.outcome is PaymentOutcome.NOT_PAID
    words = ctx.words
    assert isinstance(words, Words) and words.kept == []  # nothing of payorch's among the provider's words
    late = await adapter.parse_notification(ctx, notification(item("AUTHORISATION", "PSP0000000000001")))
    assert (late.provider_payment_reference, late.checkout_id) == ("PSP0000000000001", "chk_1")
    assert late.give_back is not None
    fake.on("POST", "/v71/payments/PSP0000000000001/reversals", reply(201, {"pspReference": "PSP0000000000004", "status": "received"}))
    await late.give_back(ctx)
    (sent,) = fake.requests
    assert json.loads(sent.content) == {"merchantAccount": MERCHANT, "reference": "PSP0000000000001-release"}
    assert sent.headers["Idempotency-Key"] == "PSP0000000000001-release"
    refused = await adapter.parse_notification(ctx, notification(item("AUTHORISATION", "PSP0000000000005", success=False, reason="Refused")))
    assert refused.give_back is None  # nothing was authorised: nothing to give back


async def test_a_notification_of_another_merchant_account_is_refused(ctx: ConnectorContext) -> None:
    other = {**item("AUTHORISATION", "PSP0000000000001"), "merchantAccountCode": "Another"}
    other["additionalData"] = {"hmacSignature": wire.signature(wire.NotificationItem.model_validate(other), KEY)}
    with pytest.raises(base.InvalidNotification):
        await adapter.parse_notification(ctx, notification(other))


async def test_an_event_payorch_does_not_act_on_is_kept_and_names_nothing(ctx: ConnectorContext) -> None:
    ref = await adapter.parse_notification(ctx, notification(item("REPORT_AVAILABLE", "PSP0000000000001")))
    assert (ref.provider_payment_reference, ref.topic, ref.give_back) == (None, "REPORT_AVAILABLE", None)
