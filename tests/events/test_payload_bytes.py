"""The typed emitters write, byte for byte, the JSON their hand-built dicts wrote (issue 30: the
catalogue models changed no event's bytes), with the intent's external_reference and metadata
after payment_intent_id in every intent event (issue 37): field order, values, a nested routing
record and last_payment_error, the absent optional field, the webhook.test envelope's
``"test": true``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import FrozenClock, isoformat
from payorch.events.catalogue import (
    EventData,
    PaymentCancelled,
    PaymentCheckoutStarted,
    PaymentExpired,
    PaymentFailed,
    WebhookEndpointDisabled,
    WebhookTest,
)
from payorch.events.catalogue_parts import LastPaymentError, Routing
from payorch.events.records import Event
from payorch.events.service import emit_payload, payload_event
from payorch.intents.schemas import CreatePaymentIntent
from payorch.intents.service import new_intent
from payorch.jsontypes import JsonObject, dumps
from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import last_payment_error
from payorch.routing.record import Candidate, RoutingRecord, Skipped, SkipReason, Strategy
from payorch.routing.strategy import Score

AT = datetime(2026, 11, 28, 7, 0, 0, 123456, tzinfo=UTC)
INTENT = "payi_0001"
# What every intent event's data starts with (events.catalogue.about).
ABOUT: dict[str, Any] = {
    "payment_intent_id": INTENT,
    "external_reference": "order-1",
    "metadata": {"cart": "c1"},
}


def _as_before(event: Event, data: dict[str, object], *, test: bool = False) -> str:
    """The body as events.service wrote it from a dict: id, type, created_at, ("test"), data."""
    body: dict[str, object] = {"id": event.id, "type": event.type, "created_at": isoformat(AT)}
    if test:
        body["test"] = True
    body["data"] = data
    return dumps(body).decode()


def _event(payload: EventData) -> Event:
    return payload_event(application_id="app_1", payload=payload, at=AT)


def test_payment_intent_created() -> None:
    caller = Caller(application_id="app_1", environment="SANDBOX", credential_id="key_1")
    request = CreatePaymentIntent.model_validate(
        {
            "merchant_account_id": "mrc_1",
            "external_reference": "order-1",
            "amount": 1500,
            "currency": "CLP",
            "provider": "provider_b_redirect_get",
            "return_url": "https://shop.example/return",
            "metadata": {"cart": "c1"},
        }
    )
    intent, event = new_intent(FrozenClock(AT), caller, request)
    assert event.payload == _as_before(
        event,
        {
            "payment_intent_id": intent.id,
            "external_reference": "order-1",
            "metadata": {"cart": "c1"},
            "merchant_account_id": "mrc_1",
            "amount": 1500,
            "currency": "CLP",
            "requested_provider": "provider_b_redirect_get",
        },
    )


def test_checkout_started_with_its_routing_record() -> None:
    record = RoutingRecord(
        strategy=Strategy.SUCCESS_RATE,
        rule="big-tickets",
        version=3,
        candidates=(
            Candidate("provider_a", 1, None, Score(1.0, 12)),
            Candidate("provider_b", 2, 40, Score(2 / 3, 3)),
            Candidate("provider_c", 3, None, Score(None, 0)),
            Candidate("provider_d", 4),
        ),
        skipped=(Skipped("provider_e", SkipReason.CURRENCY, "cannot charge CLP"),),
        chosen="provider_a",
        fallback=None,
    )
    routed = record.as_json()
    started = PaymentCheckoutStarted(**ABOUT, provider="provider_a", routing=Routing.model_validate(routed))
    event = _event(started)
    assert event.payload == _as_before(event, {**ABOUT, "provider": "provider_a", "routing": routed})


def _error(outcome: PaymentOutcome, reason: str) -> JsonObject:
    found = last_payment_error(
        lambda result: None, PaymentResult(outcome, reason=reason), provider="provider_b", at=AT
    )
    assert found is not None
    return found


@pytest.mark.parametrize("with_error", [True, False])
def test_the_endings_with_and_without_last_payment_error(with_error: bool) -> None:
    """As apply_move wrote them: the data, then last_payment_error when there is one."""
    failed_error = _error(PaymentOutcome.FAILED, "Declined by the issuer.")
    cancelled_error = _error(PaymentOutcome.CANCELLED, "The buyer cancelled.")

    def typed(error: JsonObject) -> LastPaymentError | None:
        return LastPaymentError.model_validate(error) if with_error else None

    def old(data: dict[str, object], error: JsonObject) -> dict[str, object]:
        return {**ABOUT, **data, **({"last_payment_error": error} if with_error else {})}

    failed = _event(
        PaymentFailed(**ABOUT, provider="b", reason="No.", last_payment_error=typed(failed_error))
    )
    assert failed.payload == _as_before(failed, old({"provider": "b", "reason": "No."}, failed_error))
    cancelled = _event(PaymentCancelled(**ABOUT, reason="Gone.", last_payment_error=typed(cancelled_error)))
    assert cancelled.payload == _as_before(cancelled, old({"reason": "Gone."}, cancelled_error))
    expired = _event(PaymentExpired(**ABOUT, last_payment_error=typed(cancelled_error)))
    assert expired.payload == _as_before(expired, old({}, cancelled_error))


def test_the_webhook_endpoint_events() -> None:
    disabled = _event(
        WebhookEndpointDisabled(
            webhook_endpoint_id="whe_1",
            url="https://shop.example/hooks",
            reason="failing",
            failing_since=isoformat(AT),
            failed_attempts=7,
        )
    )
    assert disabled.payment_intent_id is None
    assert disabled.payload == _as_before(
        disabled,
        {
            "webhook_endpoint_id": "whe_1",
            "url": "https://shop.example/hooks",
            "reason": "failing",
            "failing_since": isoformat(AT),
            "failed_attempts": 7,
        },
    )
    test = payload_event(
        application_id="app_1",
        payload=WebhookTest(webhook_endpoint_id="whe_1", url="https://shop.example/hooks"),
        at=AT,
        traced=False,
    )
    assert (test.payment_intent_id, test.traceparent) == (None, None)
    assert test.payload == _as_before(
        test, {"webhook_endpoint_id": "whe_1", "url": "https://shop.example/hooks"}, test=True
    )


async def test_the_test_event_is_never_emitted_to_the_subscriptions() -> None:
    test = WebhookTest(webhook_endpoint_id="whe_1", url="https://shop.example/hooks")
    with pytest.raises(ValueError, match="webhook.test"):
        # refused before the connection is used
        await emit_payload(cast("AsyncConnection", None), application_id="app_1", payload=test, at=AT)
