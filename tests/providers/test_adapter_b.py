"""provider_b_redirect_get adapter: every mapping and failure class against a fake provider
(httpx.MockTransport), signature verification, then the adapter against the simulator."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.http.client import LocalApp
from payorch.ids import new_id
from payorch.providers.base import (
    CheckoutRef,
    CheckoutRequest,
    ConnectorContext,
    Credentials,
    IncomingNotification,
    InvalidNotification,
    Mode,
    PaymentOutcome,
    ProviderRefundOutcome,
    ProviderRejected,
    ProviderUnavailable,
    RefundRequest,
)
from payorch.providers.provider_b import PROVIDER_B, wire
from payorch.providers.provider_b.signature import (
    NOTIFICATION_TOLERANCE_SECONDS as NOTIFICATION_TOLERANCE,
)
from payorch.providers.provider_b.signature import sign_notification, verify_signature
from payorch.providers.registry import get_adapter
from payorch.runtime import Runtime
from tests.kit import Sandbox
from tests.providers.fake_transport import FakeProvider, Handler, broken, fake_http, reply, slow
from tests.providers.helpers import connector_context, mock_connector, start_session

TOKEN = "TEST-1234567890-secret-access-token"  # noqa: S105 - a test value
WEBHOOK_SECRET = "whsec-0123456789abcdef0123456789abcdef"  # noqa: S105 - a test value
BASE = "https://provider-b.test"
NOW = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
INTENT = "payi_038g1waagdvsgsxsd57evwngtx66s"
CHECKOUT_ID = "chk_038g1waagdvsgsxsd57evwngtx66t"
PREFERENCE = "123456-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
RETURN_URL = "http://testserver/v1/checkout-returns/provider_b_redirect_get/" + INTENT
NOTIFY_URL = "http://testserver/v1/provider-notifications/provider_b_redirect_get/cfg_test"

# The simulator tests below: long enough for an in-process simulator call on a loaded two-core
# machine (1 s was not); the one timeout-fault test here then waits 6 s.
pytestmark = pytest.mark.settings(provider_timeout_seconds=5)

adapter = get_adapter(PROVIDER_B)


@pytest.fixture
async def fake() -> FakeProvider:
    return FakeProvider()


def make_ctx(http: httpx.AsyncClient, mode: Mode = Mode.PRODUCTION) -> ConnectorContext:
    return connector_context(
        PROVIDER_B,
        mode=mode,
        base_url=BASE,
        credentials={"access_token": TOKEN, "webhook_secret": WEBHOOK_SECRET},
        http=http,
        clock=FrozenClock(NOW),
    )


@pytest.fixture
async def http(fake: FakeProvider) -> Any:
    async with fake_http(fake) as client:
        yield client


@pytest.fixture
def ctx(http: httpx.AsyncClient) -> ConnectorContext:
    return make_ctx(http)


def checkout_request(**changes: Any) -> CheckoutRequest:
    values: dict[str, Any] = {
        "payment_intent_id": INTENT,
        "checkout_id": CHECKOUT_ID,
        "amount": 1234,
        "currency": "USD",
        "description": "Order 1",
        "return_url": RETURN_URL,
        "notification_url": NOTIFY_URL,
        "expires_at": NOW + timedelta(minutes=10),
    }
    values.update(changes)
    return CheckoutRequest(**values)


def checkout_ref(**changes: Any) -> CheckoutRef:
    values: dict[str, Any] = {
        "payment_intent_id": INTENT,
        "checkout_id": CHECKOUT_ID,
        "provider_reference": PREFERENCE,
        "amount": 1234,
        "currency": "USD",
        "provider_data": {"preference_id": PREFERENCE},
    }
    values.update(changes)
    return CheckoutRef(**values)


def payment(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": 987654321,
        "status": "approved",
        "status_detail": "accredited",
        "external_reference": INTENT,
        "transaction_amount": 12.34,
        "transaction_amount_refunded": 0,
        "currency_id": "USD",
        "date_approved": "2026-11-22T10:02:00.000-04:00",
        "date_created": "2026-11-22T10:01:00.000-04:00",
        "authorization_code": "AUTH42",
    }
    body.update(changes)
    return body


def search(*payments: dict[str, Any]) -> dict[str, Any]:
    return {"paging": {"total": len(payments), "limit": 30, "offset": 0}, "results": list(payments)}


PREFERENCE_ANSWER = {
    "id": PREFERENCE,
    "init_point": BASE + "/checkout/v1/redirect?pref_id=" + PREFERENCE,
    "sandbox_init_point": "https://sandbox.provider-b.test/checkout/v1/redirect?pref_id=" + PREFERENCE,
    "date_created": "2026-11-22T10:00:00.000-04:00",
}


# -- create ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "item"),
    [
        ("Two coffees", {"title": "Two coffees", "description": "Order order-9"}),
        (None, {"title": "Order order-9"}),  # never the intent id: the buyer knows the order
    ],
)
async def test_the_item_carries_the_shops_description_and_order(
    ctx: ConnectorContext, fake: FakeProvider, description: str | None, item: dict[str, str]
) -> None:
    fake.on("POST", wire.PREFERENCES, reply(201, PREFERENCE_ANSWER))
    await adapter.create_checkout(
        ctx, checkout_request(description=description, external_reference="order-9")
    )
    (request,) = fake.requests
    (sent,) = json.loads(request.content)["items"]
    assert {k: v for k, v in sent.items() if k in ("title", "description")} == item


async def test_create_preference_fields(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("POST", wire.PREFERENCES, reply(201, PREFERENCE_ANSWER))
    session = await adapter.create_checkout(ctx, checkout_request())

    (request,) = fake.requests
    assert request.headers["Authorization"] == "Bearer " + TOKEN
    assert request.headers["X-Idempotency-Key"] == CHECKOUT_ID
    body = json.loads(request.content)
    assert body["external_reference"] == INTENT
    assert body["items"] == [
        {"id": INTENT, "title": "Order 1", "quantity": 1, "currency_id": "USD", "unit_price": 12.34}
    ]
    assert body["back_urls"] == {
        "success": RETURN_URL,
        "failure": RETURN_URL,
        "pending": RETURN_URL,
    }
    assert body["auto_return"] == "all"
    assert body["notification_url"] == NOTIFY_URL
    assert body["expires"] is True
    assert body["expiration_date_to"] == "2026-11-22T10:10:00.000Z"
    assert datetime.fromisoformat(body["expiration_date_to"]) == NOW + timedelta(minutes=10)
    assert body["metadata"]["payment_intent_id"] == INTENT
    assert body["metadata"]["checkout_id"] == CHECKOUT_ID

    assert session.method == "GET"
    assert session.fields == {}
    assert session.url == PREFERENCE_ANSWER["init_point"]
    assert session.provider_reference == PREFERENCE
    assert session.expires_at == NOW + timedelta(minutes=10)


@pytest.mark.parametrize(
    ("amount", "currency", "unit_price"),
    [(1500, "CLP", 1500), (1, "USD", 0.01), (100, "BRL", 1), (999_999_999_999_999, "USD", None)],
)
async def test_unit_price_from_minor_units(
    ctx: ConnectorContext, fake: FakeProvider, amount: int, currency: str, unit_price: float | None
) -> None:
    fake.on("POST", wire.PREFERENCES, reply(201, PREFERENCE_ANSWER))
    await adapter.create_checkout(ctx, checkout_request(amount=amount, currency=currency))
    sent = json.loads(fake.requests[0].content)["items"][0]["unit_price"]
    if unit_price is not None:
        assert sent == unit_price
    assert wire.to_minor(sent, currency) == amount  # exact round trip


async def test_sandbox_mode_uses_the_sandbox_init_point(http: httpx.AsyncClient, fake: FakeProvider) -> None:
    fake.on("POST", wire.PREFERENCES, reply(201, PREFERENCE_ANSWER))
    session = await adapter.create_checkout(make_ctx(http, Mode.SANDBOX), checkout_request())
    assert session.url == PREFERENCE_ANSWER["sandbox_init_point"]


@pytest.mark.parametrize(
    ("handler", "error"),
    [
        (slow(), ProviderUnavailable),
        (broken(httpx.ReadError, "connection reset"), ProviderUnavailable),
        (reply(500, {"message": "internal_error"}), ProviderUnavailable),
        (reply(201, raw=b"<html>"), ProviderUnavailable),
        (reply(201, {"id": PREFERENCE}), ProviderUnavailable),
        (
            reply(400, {"message": "invalid items", "error": "bad_request", "status": 400}),
            ProviderRejected,
        ),
        (
            reply(401, {"message": "invalid access token", "error": "unauthorized"}),
            ProviderRejected,
        ),
    ],
)
async def test_create_failures(
    ctx: ConnectorContext, fake: FakeProvider, handler: Handler, error: type[Exception]
) -> None:
    fake.on("POST", wire.PREFERENCES, handler)
    with pytest.raises(error) as caught:
        await adapter.create_checkout(ctx, checkout_request())
    assert TOKEN not in str(caught.value)


async def test_unsupported_currency_is_refused_without_calling(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    with pytest.raises(ProviderRejected):
        await adapter.create_checkout(ctx, checkout_request(currency="XXX"))
    assert fake.requests == []


# -- returns --------------------------------------------------------------------------------------


def return_params(**changes: str) -> dict[str, str]:
    params = {
        "collection_id": "987654321",
        "collection_status": "approved",
        "payment_id": "987654321",
        "status": "approved",
        "external_reference": INTENT,
        "payment_type": "credit_card",
        "merchant_order_id": "555",
        "preference_id": PREFERENCE,
        "site_id": "MLC",
        "processing_mode": "aggregator",
        "merchant_account_id": "null",
    }
    params.update(changes)
    return params


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("approved", PaymentOutcome.AUTHORIZED),
        ("pending", PaymentOutcome.PROCESSING),
        ("in_process", PaymentOutcome.PROCESSING),
        ("authorized", PaymentOutcome.PROCESSING),
        ("rejected", PaymentOutcome.FAILED),
        ("cancelled", PaymentOutcome.CANCELLED),
        ("refunded", PaymentOutcome.AUTHORIZED),
    ],
)
async def test_return_reads_the_payment(
    ctx: ConnectorContext, fake: FakeProvider, status: str, outcome: PaymentOutcome
) -> None:
    fake.on("GET", "/v1/payments/987654321", reply(200, payment(status=status)))
    fake.on("GET", wire.PAYMENTS_SEARCH, reply(200, search(payment(status=status))))
    # The browser says approved; only the provider's answer counts.
    result = await adapter.confirm_return(ctx, checkout_ref(), return_params(status="approved"))
    paths = [r.url.path for r in fake.requests]
    # A payment that did not pay is checked against the intent's other payments.
    assert paths == ["/v1/payments/987654321"] + (
        [] if outcome is PaymentOutcome.AUTHORIZED else [wire.PAYMENTS_SEARCH]
    )
    assert fake.requests[0].headers["Authorization"] == "Bearer " + TOKEN
    assert result.outcome is outcome
    assert result.provider_payment_reference == "987654321"
    if outcome is PaymentOutcome.AUTHORIZED:
        assert result.authorization_code == "AUTH42"
        assert result.amount == 1234 and result.currency == "USD"
        assert result.authorized_at == datetime(2026, 11, 22, 14, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    "changes",
    [
        {"transaction_amount": 12.33},
        {"transaction_amount": 123.4},
        {"currency_id": "CLP"},
        {"external_reference": "payi_another"},
        {"external_reference": None},
        {"metadata": {"checkout_id": "chk_another"}},
    ],
)
async def test_a_payment_that_does_not_match_is_not_trusted(
    ctx: ConnectorContext, fake: FakeProvider, changes: dict[str, Any]
) -> None:
    fake.on("GET", "/v1/payments/987654321", reply(200, payment(**changes)))
    params = return_params(external_reference="null")
    result = await adapter.confirm_return(ctx, checkout_ref(), params)
    assert result.outcome is PaymentOutcome.IGNORED
    assert "not trusted" in (result.reason or "")


async def test_null_return_searches_by_reference(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("GET", wire.PAYMENTS_SEARCH, reply(200, search()))
    fake.on("PUT", f"{wire.PREFERENCES}/{PREFERENCE}", reply(200, PREFERENCE_ANSWER))
    params = return_params(payment_id="null", collection_id="null", status="null")
    result = await adapter.confirm_return(ctx, checkout_ref(), params)
    request = fake.requests[0]
    assert request.url.params["external_reference"] == INTENT
    assert request.url.params["sort"] == "date_created"
    assert request.url.params["criteria"] == "desc"
    # Nothing paid: the preference is expired, and searched again, before it is CANCELLED.
    assert [(r.method, r.url.path) for r in fake.requests[1:]] == [
        ("PUT", f"{wire.PREFERENCES}/{PREFERENCE}"),
        ("GET", wire.PAYMENTS_SEARCH),
    ]
    assert result.outcome is PaymentOutcome.CANCELLED


async def test_null_return_while_the_buyer_pays_in_another_tab(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    searches = iter([search(), search(payment(id=5, status="approved"))])

    async def next_search(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=next(searches))

    fake.on("GET", wire.PAYMENTS_SEARCH, next_search)
    fake.on("PUT", f"{wire.PREFERENCES}/{PREFERENCE}", reply(200, PREFERENCE_ANSWER))
    params = return_params(payment_id="null", collection_id="null", status="null")
    result = await adapter.confirm_return(ctx, checkout_ref(), params)
    assert result.outcome is PaymentOutcome.AUTHORIZED  # paid before the preference was expired
    assert result.provider_payment_reference == "5"


@pytest.mark.parametrize("hint", ["return", "notification"])
async def test_a_rejected_payment_does_not_hide_a_later_approved_one(
    ctx: ConnectorContext, fake: FakeProvider, hint: str
) -> None:
    fake.on("GET", "/v1/payments/987654321", reply(200, payment(status="rejected")))
    fake.on(
        "GET",
        wire.PAYMENTS_SEARCH,
        reply(200, search(payment(id=6, status="approved"), payment(status="rejected"))),
    )
    if hint == "return":
        result = await adapter.confirm_return(ctx, checkout_ref(), return_params(status="x"))
    else:
        result = await adapter.read_status(ctx, checkout_ref(), payment_reference="987654321")
    assert result.outcome is PaymentOutcome.AUTHORIZED and result.provider_payment_reference == "6"


async def test_null_return_finds_a_payment_made_after_all(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on(
        "GET",
        wire.PAYMENTS_SEARCH,
        reply(
            200,
            search(
                payment(id=3, status="rejected"),
                payment(id=2, status="approved"),
                payment(id=1, status="approved", transaction_amount=1.0),  # not ours: ignored
            ),
        ),
    )
    params = return_params(payment_id="null", collection_id="null", status="null")
    result = await adapter.confirm_return(ctx, checkout_ref(), params)
    assert result.outcome is PaymentOutcome.AUTHORIZED
    assert result.provider_payment_reference == "2"


@pytest.mark.parametrize(
    "params",
    [
        return_params(preference_id="123456-another-preference"),
        return_params(external_reference="payi_another"),
        # Without payment, only our preference id proves the return: a guess of the intent id
        # is not enough to cancel.
        {"payment_id": "null", "status": "null", "external_reference": INTENT},
        {"status": "null"},
        {},
        return_params(payment_id="../../checkout/preferences", collection_id="null"),
    ],
)
async def test_foreign_or_forged_returns_are_ignored(
    ctx: ConnectorContext, fake: FakeProvider, params: dict[str, str]
) -> None:
    result = await adapter.confirm_return(ctx, checkout_ref(), params)
    assert result.outcome is PaymentOutcome.IGNORED
    assert fake.requests == []


async def test_a_return_naming_an_unknown_payment_is_ignored(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    fake.on("GET", "/v1/payments/987654321", reply(404, {"message": "Payment not found"}))
    assert (await adapter.confirm_return(ctx, checkout_ref(), return_params())).outcome is (
        PaymentOutcome.IGNORED
    )


@pytest.mark.parametrize(
    ("handler", "error"),
    [
        (slow(), ProviderUnavailable),
        (broken(httpx.ReadError, "connection reset"), ProviderUnavailable),
        (reply(500, {}), ProviderUnavailable),
        (reply(200, raw=b"garbage"), ProviderUnavailable),
        (reply(200, payment(status="brand_new_status")), ProviderUnavailable),
        (reply(401, {"message": "invalid token"}), ProviderRejected),
    ],
)
async def test_return_failures(
    ctx: ConnectorContext, fake: FakeProvider, handler: Handler, error: type[Exception]
) -> None:
    fake.on("GET", "/v1/payments/987654321", handler)
    with pytest.raises(error):
        await adapter.confirm_return(ctx, checkout_ref(), return_params())


# -- status and cancel ----------------------------------------------------------------------------


async def test_read_status_without_payments_is_not_paid(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("GET", wire.PAYMENTS_SEARCH, reply(200, search()))
    assert (await adapter.read_status(ctx, checkout_ref())).outcome is PaymentOutcome.NOT_PAID


async def test_read_status_with_a_payment_reference(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("GET", "/v1/payments/77", reply(200, payment(id=77, status="in_process")))
    fake.on("GET", wire.PAYMENTS_SEARCH, reply(200, search()))
    result = await adapter.read_status(ctx, checkout_ref(), payment_reference="77")
    assert result.outcome is PaymentOutcome.PROCESSING
    fake.on("GET", "/v1/payments/77", reply(200, payment(id=77, external_reference="payi_x")))
    result = await adapter.read_status(ctx, checkout_ref(), payment_reference="77")
    assert result.outcome is PaymentOutcome.NOT_PAID  # someone else's payment proves nothing here


async def test_cancel_expires_the_preference_then_confirms_no_payment(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    fake.on("PUT", f"{wire.PREFERENCES}/{PREFERENCE}", reply(200, PREFERENCE_ANSWER))
    fake.on("GET", wire.PAYMENTS_SEARCH, reply(200, search(payment(status="rejected"))))
    result = await adapter.cancel_checkout(ctx, checkout_ref())
    assert [(r.method, r.url.path) for r in fake.requests] == [
        ("PUT", f"{wire.PREFERENCES}/{PREFERENCE}"),
        ("GET", wire.PAYMENTS_SEARCH),
    ]
    body = json.loads(fake.requests[0].content)
    assert body["expires"] is True
    assert datetime.fromisoformat(body["expiration_date_to"]) < NOW  # already over
    assert datetime.fromisoformat(body["expiration_date_from"]) < datetime.fromisoformat(
        body["expiration_date_to"]
    )
    assert result.outcome is PaymentOutcome.NOT_PAID


@pytest.mark.parametrize(
    ("status", "outcome"),
    [("approved", PaymentOutcome.AUTHORIZED), ("pending", PaymentOutcome.PROCESSING)],
)
async def test_cancel_refuses_when_a_payment_started(
    ctx: ConnectorContext, fake: FakeProvider, status: str, outcome: PaymentOutcome
) -> None:
    fake.on("PUT", f"{wire.PREFERENCES}/{PREFERENCE}", reply(200, PREFERENCE_ANSWER))
    fake.on("GET", wire.PAYMENTS_SEARCH, reply(200, search(payment(status=status))))
    assert (await adapter.cancel_checkout(ctx, checkout_ref())).outcome is outcome


@pytest.mark.parametrize(
    ("handler", "error"),
    [
        (slow(), ProviderUnavailable),
        (reply(500, {}), ProviderUnavailable),
        (reply(400, {"message": "cannot update"}), ProviderRejected),
    ],
)
async def test_cancel_failures(
    ctx: ConnectorContext, fake: FakeProvider, handler: Handler, error: type[Exception]
) -> None:
    fake.on("PUT", f"{wire.PREFERENCES}/{PREFERENCE}", handler)
    with pytest.raises(error):
        await adapter.cancel_checkout(ctx, checkout_ref())


# -- refunds --------------------------------------------------------------------------------------


def refund_request(**changes: Any) -> RefundRequest:
    values: dict[str, Any] = {
        "refund_id": "rfd_038g1waagdvsgsxsd57evwngtx66s",
        "provider_payment_reference": "987654321",
        "amount": 1234,
        "currency": "USD",
        "payment_amount": 1234,
        "refunded_before": 0,
    }
    values.update(changes)
    return RefundRequest(**values)


REFUNDS = "/v1/payments/987654321/refunds"


async def test_whole_refund_sends_an_empty_body_and_our_refund_id(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    fake.on(
        "POST",
        REFUNDS,
        reply(201, {"id": 1, "payment_id": 987654321, "amount": 12.34, "status": "approved"}),
    )
    result = await adapter.refund(ctx, refund_request())
    (request,) = fake.requests
    assert request.headers["X-Idempotency-Key"] == "rfd_038g1waagdvsgsxsd57evwngtx66s"
    assert request.content == b""
    assert result.outcome is ProviderRefundOutcome.SUCCEEDED
    assert result.provider_refund_reference == "1"


async def test_partial_refund_names_its_amount(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("POST", REFUNDS, reply(201, {"id": 2, "amount": 5.0, "status": "approved"}))
    await adapter.refund(ctx, refund_request(amount=500))
    assert json.loads(fake.requests[0].content) == {"amount": 5.0}
    await adapter.refund(ctx, refund_request(amount=734, refunded_before=500))
    assert json.loads(fake.requests[1].content) == {"amount": 7.34}


@pytest.mark.parametrize(
    ("handler", "outcome", "error"),
    [
        (reply(201, {"id": 1, "status": "in_process"}), ProviderRefundOutcome.PENDING, None),
        (reply(201, {"id": 1}), ProviderRefundOutcome.PENDING, None),
        (reply(201, {"id": 1, "status": "rejected"}), None, ProviderRejected),
        (
            reply(400, {"message": "Invalid refund amount", "error": "bad_request"}),
            None,
            ProviderRejected,
        ),
        (reply(404, {"message": "Payment not found"}), None, ProviderRejected),
        (slow(), None, ProviderUnavailable),
        (broken(httpx.ReadError, "connection reset"), None, ProviderUnavailable),
        (reply(500, {}), None, ProviderUnavailable),
        (reply(201, raw=b"nope"), None, ProviderUnavailable),
    ],
)
async def test_refund_answers(
    ctx: ConnectorContext,
    fake: FakeProvider,
    handler: Handler,
    outcome: ProviderRefundOutcome | None,
    error: type[Exception] | None,
) -> None:
    fake.on("POST", REFUNDS, handler)
    if error is not None:
        with pytest.raises(error):
            await adapter.refund(ctx, refund_request())
    else:
        assert (await adapter.refund(ctx, refund_request())).outcome is outcome


@pytest.mark.parametrize(
    ("refunded", "status", "changes", "outcome"),
    [
        (12.34, "refunded", {}, ProviderRefundOutcome.SUCCEEDED),
        (None, "refunded", {}, ProviderRefundOutcome.SUCCEEDED),
        (0, "approved", {}, ProviderRefundOutcome.NOT_APPLIED),
        (5.0, "approved", {"amount": 500}, ProviderRefundOutcome.SUCCEEDED),
        (5.0, "approved", {"amount": 300, "refunded_before": 500}, ProviderRefundOutcome.NOT_APPLIED),
        (8.0, "approved", {"amount": 300, "refunded_before": 500}, ProviderRefundOutcome.SUCCEEDED),
        (2.0, "approved", {"amount": 500}, ProviderRefundOutcome.PENDING),
    ],
)
async def test_read_refund_from_the_refunded_total(
    ctx: ConnectorContext,
    fake: FakeProvider,
    refunded: float | None,
    status: str,
    changes: dict[str, Any],
    outcome: ProviderRefundOutcome,
) -> None:
    fake.on(
        "GET",
        "/v1/payments/987654321",
        reply(200, payment(status=status, transaction_amount_refunded=refunded)),
    )
    assert (await adapter.read_refund(ctx, refund_request(**changes))).outcome is outcome


# -- notifications --------------------------------------------------------------------------------


def notification(
    *,
    data_id: str | None = "987654321",
    request_id: str | None = "req-1",
    ts: int | None = None,
    secret: str = WEBHOOK_SECRET,
    signature: str | None = None,
    topic: str = "payment",
) -> IncomingNotification:
    ts = int(NOW.timestamp()) if ts is None else ts
    headers = {
        "x-signature": signature or sign_notification(secret, data_id=data_id, request_id=request_id, ts=ts)
    }
    if request_id is not None:
        headers["x-request-id"] = request_id
    query = {"type": topic}
    if data_id is not None:
        query["data.id"] = data_id
    body = json.dumps({"id": 1, "type": topic, "action": "payment.updated", "data": {"id": data_id}}).encode()
    return IncomingNotification(headers=headers, query=query, body=body)


async def test_valid_notification_names_the_payment_and_its_intent(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    fake.on("GET", "/v1/payments/987654321", reply(200, payment(status="approved")))
    ref = await adapter.parse_notification(ctx, notification())
    assert ref.provider_payment_reference == "987654321"
    assert ref.payment_intent_id == INTENT
    assert ref.topic == "payment"
    # ...which the service then confirms against its checkout:
    result = await adapter.read_status(ctx, checkout_ref(), payment_reference="987654321")
    assert result.outcome is PaymentOutcome.AUTHORIZED


async def test_header_names_are_case_insensitive(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("GET", "/v1/payments/987654321", reply(200, payment()))
    base = notification()
    upper = IncomingNotification(
        headers={k.upper(): v for k, v in base.headers.items()}, query=base.query, body=base.body
    )
    assert (await adapter.parse_notification(ctx, upper)).payment_intent_id == INTENT


@pytest.mark.parametrize(
    "incoming",
    [
        notification(secret="another-secret"),  # noqa: S106 - wrong key
        notification(signature=f"ts={int(NOW.timestamp())},v1=" + "0" * 64),  # tampered
        notification(ts=int(NOW.timestamp()) - 301),  # stale
        notification(ts=int(NOW.timestamp()) + 301),  # from the future
        notification(signature="v1=" + "a" * 64),  # no ts
        notification(signature=f"ts={int(NOW.timestamp())}"),  # no v1
        notification(signature="garbage"),
        notification(signature="ts=abc,v1=" + "a" * 64),
    ],
)
async def test_bad_signatures_are_refused_without_calling(
    ctx: ConnectorContext, fake: FakeProvider, incoming: IncomingNotification
) -> None:
    with pytest.raises(InvalidNotification):
        await adapter.parse_notification(ctx, incoming)
    assert fake.requests == []


async def test_missing_signature_header(ctx: ConnectorContext, fake: FakeProvider) -> None:
    base = notification()
    headers = {k: v for k, v in base.headers.items() if k != "x-signature"}
    with pytest.raises(InvalidNotification, match="missing"):
        await adapter.parse_notification(ctx, IncomingNotification(headers, base.query, base.body))


async def test_signed_parts_cannot_be_swapped(ctx: ConnectorContext) -> None:
    base = notification()
    for query, headers in [
        ({**base.query, "data.id": "111"}, base.headers),  # another payment id
        (base.query, {**base.headers, "x-request-id": "req-2"}),  # another request id
        (base.query, {"x-signature": base.headers["x-signature"]}),  # request id dropped
        ({"type": "payment"}, base.headers),  # data.id dropped
    ]:
        with pytest.raises(InvalidNotification):
            await adapter.parse_notification(ctx, IncomingNotification(headers, query, base.body))


def test_absent_parts_are_dropped_from_the_manifest() -> None:
    ts = int(NOW.timestamp())
    for data_id, request_id in [(None, "req-1"), ("987", None), (None, None)]:
        signature = sign_notification(WEBHOOK_SECRET, data_id=data_id, request_id=request_id, ts=ts)
        headers = {"x-signature": signature}
        if request_id:
            headers["x-request-id"] = request_id
        query = {"data.id": data_id} if data_id else {}
        assert verify_signature(WEBHOOK_SECRET, headers, query, now=NOW) == data_id
    # The manifest is exactly the documented one.
    import hashlib
    import hmac

    manifest = f"id:987;request-id:req-1;ts:{ts};"
    expected = hmac.new(WEBHOOK_SECRET.encode(), manifest.encode(), hashlib.sha256).hexdigest()
    assert sign_notification(WEBHOOK_SECRET, data_id="987", request_id="req-1", ts=ts).endswith(
        "v1=" + expected
    )


async def test_other_topics_are_acknowledged_without_reading(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    ref = await adapter.parse_notification(ctx, notification(topic="point_integration_wh"))
    assert ref.provider_payment_reference is None
    assert fake.requests == []


async def test_notification_for_an_unknown_payment(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("GET", "/v1/payments/987654321", reply(404, {"message": "not found"}))
    ref = await adapter.parse_notification(ctx, notification())
    assert ref.provider_payment_reference == "987654321" and ref.payment_intent_id is None


async def test_notification_read_failure_is_unavailable(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("GET", "/v1/payments/987654321", reply(503, {}))
    with pytest.raises(ProviderUnavailable):
        await adapter.parse_notification(ctx, notification())


async def test_connector_without_webhook_secret_refuses(http: httpx.AsyncClient) -> None:
    ctx = ConnectorContext(**{**make_ctx(http).__dict__, "credentials": Credentials({"access_token": TOKEN})})
    with pytest.raises(InvalidNotification):
        await adapter.parse_notification(ctx, notification())


# -- secrets --------------------------------------------------------------------------------------


async def test_incomplete_credentials_are_refused_before_any_call(
    http: httpx.AsyncClient, fake: FakeProvider
) -> None:
    # No access_token stored: the adapter refuses (naming the field, never a value) instead of
    # calling the provider with an empty bearer token.
    ctx = ConnectorContext(
        **{**make_ctx(http).__dict__, "credentials": Credentials({"webhook_secret": WEBHOOK_SECRET})}
    )
    with pytest.raises(ProviderRejected) as refused:
        await adapter.read_status(ctx, checkout_ref())
    assert "access_token" in refused.value.reason and WEBHOOK_SECRET not in refused.value.reason
    assert fake.requests == []


async def test_secrets_are_masked(
    ctx: ConnectorContext, fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    for text in (repr(ctx), str(ctx), repr(ctx.credentials)):
        assert TOKEN not in text and WEBHOOK_SECRET not in text
    caplog.set_level(logging.DEBUG)
    fake.on("POST", wire.PREFERENCES, reply(401, {"message": "bad token " + "x"}))
    with pytest.raises(ProviderRejected) as caught:
        await adapter.create_checkout(ctx, checkout_request())
    assert TOKEN not in repr(caught.value)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert caplog.records and TOKEN not in logged and WEBHOOK_SECRET not in logged


# =================================================================================================
# The same adapter against the simulator over HTTP (in-process through runtime.http), on SQLite
# and PostgreSQL. Notifications go to a capturing route of our own host.

SIM = "http://testserver/simulator/provider_b"
CAPTURE_PATH = "/capture/notifications"


class CaptureNotifications:
    """Our app, plus one route that records what the simulator notifies. The runtime is built
    with it as its in-process app (``local_app``); ``sim`` sets the app it wraps."""

    def __init__(self) -> None:
        self.app: Any = None
        self.received: list[IncomingNotification] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != CAPTURE_PATH:
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        query = dict(parse_qsl(scope["query_string"].decode()))
        self.received.append(IncomingNotification(headers, query, body))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture
def capture() -> CaptureNotifications:
    return CaptureNotifications()


@pytest.fixture
def local_app(capture: CaptureNotifications) -> LocalApp:
    return LocalApp(capture)


@pytest.fixture
async def sim(
    runtime: Runtime, capture: CaptureNotifications
) -> tuple[ConnectorContext, Sandbox, CaptureNotifications]:
    capture.app = create_app(runtime=runtime)
    ctx, sandbox = await mock_connector(runtime, PROVIDER_B)
    return ctx, sandbox, capture


async def sim_checkout(
    ctx: ConnectorContext, *, amount: int = 1500, currency: str = "CLP", intent: str | None = None
) -> tuple[CheckoutRef, Any]:
    return await start_session(
        adapter,
        ctx,
        amount=amount,
        currency=currency,
        intent=intent,
        notification_url="http://testserver" + CAPTURE_PATH,
    )


async def buyer_chooses(
    ctx: ConnectorContext, session: Any, outcome: str, *, offered: bool = True
) -> dict[str, str]:
    page = await ctx.http.get(session.url)
    assert page.status_code == 200, page.text
    assert (f'name="outcome" value="{outcome}"' in page.text) is offered
    pref_id = dict(parse_qsl(urlsplit(session.url).query))["pref_id"]
    chosen = await ctx.http.post(SIM + "/checkout/v1/redirect", data={"pref_id": pref_id, "outcome": outcome})
    assert chosen.status_code == 303, chosen.text
    return dict(parse_qsl(urlsplit(chosen.headers["location"]).query))


async def control(ctx: ConnectorContext, sandbox: Sandbox, name: str, body: dict[str, Any]) -> None:
    response = await ctx.http.post(
        f"http://testserver/simulator/controls/{name}", json=body, headers=sandbox.headers
    )
    assert response.status_code == 200, response.text


async def test_sim_approve_return_and_notification(sim: Any) -> None:
    ctx, _, capture = sim
    ref, session = await sim_checkout(ctx, amount=1234, currency="USD")
    assert session.method == "GET" and session.url.startswith(SIM + "/checkout/v1/redirect?")
    assert (await adapter.read_status(ctx, ref)).outcome is PaymentOutcome.NOT_PAID

    params = await buyer_chooses(ctx, session, "approve")
    assert params["status"] == "approved" and params["preference_id"] == ref.provider_reference
    result = await adapter.confirm_return(ctx, ref, params)
    assert result.outcome is PaymentOutcome.AUTHORIZED
    assert result.amount == 1234 and result.currency == "USD" and result.authorization_code
    # Confirming again reads the same payment: still authorized, nothing else happens.
    assert (await adapter.confirm_return(ctx, ref, params)).outcome is PaymentOutcome.AUTHORIZED

    (incoming,) = capture.received
    note = await adapter.parse_notification(ctx, incoming)
    assert note.payment_intent_id == ref.payment_intent_id
    assert note.provider_payment_reference == result.provider_payment_reference
    confirmed = await adapter.read_status(ctx, ref, payment_reference=note.provider_payment_reference)
    assert confirmed.outcome is PaymentOutcome.AUTHORIZED
    # A paid checkout cannot be replaced.
    assert (await adapter.cancel_checkout(ctx, ref)).outcome is PaymentOutcome.AUTHORIZED

    tampered = IncomingNotification(
        incoming.headers, {**incoming.query, "data.id": "10000000001"}, incoming.body
    )
    with pytest.raises(InvalidNotification):
        await adapter.parse_notification(ctx, tampered)
    ctx.clock.advance(NOTIFICATION_TOLERANCE + 1)  # type: ignore[attr-defined]
    with pytest.raises(InvalidNotification, match="stale"):
        await adapter.parse_notification(ctx, incoming)


@pytest.mark.parametrize(
    ("choice", "outcome"),
    [
        ("reject", PaymentOutcome.FAILED),
        ("pending", PaymentOutcome.PROCESSING),
        ("cancel", PaymentOutcome.CANCELLED),
    ],
)
async def test_sim_other_outcomes(sim: Any, choice: str, outcome: PaymentOutcome) -> None:
    ctx, _, _ = sim
    ref, session = await sim_checkout(ctx)
    params = await buyer_chooses(ctx, session, choice)
    result = await adapter.confirm_return(ctx, ref, params)
    assert result.outcome is outcome
    if choice == "cancel":
        assert params["payment_id"] == "null"


async def test_sim_pending_payment_settled_by_the_control_notifies(sim: Any, runtime: Runtime) -> None:
    ctx, sandbox, capture = sim
    ref, session = await sim_checkout(ctx)
    params = await buyer_chooses(ctx, session, "pending")
    assert (await adapter.confirm_return(ctx, ref, params)).outcome is PaymentOutcome.PROCESSING
    assert capture.received == []
    # Pending: cannot be replaced.
    assert (await adapter.cancel_checkout(ctx, ref)).outcome is PaymentOutcome.PROCESSING

    await control(ctx, sandbox, "settle", {"payment_intent_id": ref.payment_intent_id, "outcome": "approve"})
    await runtime.detached.drain()  # an in-process call: its notification left detached
    (incoming,) = capture.received
    note = await adapter.parse_notification(ctx, incoming)
    assert note.payment_intent_id == ref.payment_intent_id
    result = await adapter.read_status(ctx, ref, payment_reference=note.provider_payment_reference)
    assert result.outcome is PaymentOutcome.AUTHORIZED
    assert (await adapter.read_status(ctx, ref)).outcome is PaymentOutcome.AUTHORIZED


async def test_sim_replaced_checkout_is_expired_and_its_return_ignored(sim: Any) -> None:
    ctx, _, _ = sim
    old, old_session = await sim_checkout(ctx)
    assert (await adapter.cancel_checkout(ctx, old)).outcome is PaymentOutcome.NOT_PAID
    current, _ = await sim_checkout(ctx, intent=old.payment_intent_id)
    # The buyer still on the old page cannot pay there any more (even submitting an old form)...
    params = await buyer_chooses(ctx, old_session, "approve", offered=False)
    assert params["payment_id"] == "null"
    # ...and that return does not touch the current checkout.
    assert (await adapter.confirm_return(ctx, current, params)).outcome is PaymentOutcome.IGNORED
    assert (await adapter.read_status(ctx, current)).outcome is PaymentOutcome.NOT_PAID


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_sim_faults(sim: Any) -> None:
    ctx, sandbox, _ = sim
    ref, session = await sim_checkout(ctx)
    params = await buyer_chooses(ctx, session, "approve")
    for mode in ("error", "timeout"):
        await control(ctx, sandbox, "faults", {"provider": PROVIDER_B, "mode": mode})
        with pytest.raises(ProviderUnavailable):
            await sim_checkout(ctx)
        with pytest.raises(ProviderUnavailable):
            await adapter.confirm_return(ctx, ref, params)
    await control(ctx, sandbox, "faults", {"provider": PROVIDER_B, "mode": "ok"})
    assert (await adapter.confirm_return(ctx, ref, params)).outcome is PaymentOutcome.AUTHORIZED


async def test_sim_refunds_are_idempotent_by_refund_id(sim: Any) -> None:
    ctx, _, _ = sim
    ref, session = await sim_checkout(ctx, amount=10000, currency="USD")
    paid = await adapter.confirm_return(ctx, ref, await buyer_chooses(ctx, session, "approve"))
    assert paid.provider_payment_reference

    def refund(amount: int, before: int, refund_id: str) -> RefundRequest:
        return RefundRequest(
            refund_id=refund_id,
            provider_payment_reference=paid.provider_payment_reference or "",
            amount=amount,
            currency="USD",
            payment_amount=10000,
            refunded_before=before,
        )

    first = refund(2550, 0, new_id("rfd"))
    assert (await adapter.read_refund(ctx, first)).outcome is ProviderRefundOutcome.NOT_APPLIED
    done = await adapter.refund(ctx, first)
    assert done.outcome is ProviderRefundOutcome.SUCCEEDED
    again = await adapter.refund(ctx, first)  # a retry after an unknown outcome
    assert again.provider_refund_reference == done.provider_refund_reference
    state = await adapter.read_refund(ctx, first)
    assert state.outcome is ProviderRefundOutcome.SUCCEEDED
    assert state.details["refunded_amount"] == 2550  # refunded once, not twice

    with pytest.raises(ProviderRejected):
        await adapter.refund(ctx, refund(9000, 2550, new_id("rfd")))
    rest = refund(7450, 2550, new_id("rfd"))
    assert (await adapter.refund(ctx, rest)).outcome is ProviderRefundOutcome.SUCCEEDED
    assert (await adapter.read_refund(ctx, rest)).details["status"] == "refunded"
    assert (await adapter.read_status(ctx, ref)).outcome is PaymentOutcome.AUTHORIZED


async def test_sim_whole_refund_sends_no_amount(sim: Any) -> None:
    ctx, _, _ = sim
    ref, session = await sim_checkout(ctx, amount=1500, currency="CLP")
    paid = await adapter.confirm_return(ctx, ref, await buyer_chooses(ctx, session, "approve"))
    whole = RefundRequest(
        refund_id=new_id("rfd"),
        provider_payment_reference=paid.provider_payment_reference or "",
        amount=1500,
        currency="CLP",
        payment_amount=1500,
        refunded_before=0,
    )
    assert (await adapter.refund(ctx, whole)).outcome is ProviderRefundOutcome.SUCCEEDED
    state = await adapter.read_refund(ctx, whole)
    assert state.outcome is ProviderRefundOutcome.SUCCEEDED
    assert state.details == {"status": "refunded", "refunded_amount": 1500}
    with pytest.raises(ProviderRejected):  # nothing left
        await adapter.refund(ctx, RefundRequest(**{**whole.__dict__, "refund_id": new_id("rfd")}))


@given(
    amount=st.integers(min_value=1, max_value=999_999_999_999_999),
    currency=st.sampled_from(["CLP", "USD", "BRL", "ARS", "JPY", "BHD", "KWD"]),
)
def test_amounts_round_trip_exactly_through_the_wire(amount: int, currency: str) -> None:
    sent = json.loads(json.dumps(wire.to_major(amount, currency)))  # as it travels in JSON
    assert wire.to_minor(sent, currency) == amount
