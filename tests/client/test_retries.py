"""Client retries, Idempotency-Key reuse, backoff and typed errors, over httpx.MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from payorch.client import (
    AsyncPayorchClient,
    AuthenticationError,
    IdempotencyError,
    InvalidStateError,
    NotFoundError,
    PayorchClient,
    PayorchConnectionError,
    PayorchTimeoutError,
    RateLimitError,
    RetryPolicy,
    ServiceUnavailableError,
    UnexpectedResponseError,
)

pytestmark = pytest.mark.slow

KEY = "pay_sb_0123456789ab_" + "c" * 48
INTENT = {
    "id": "payi_1",
    "status": "CREATED",
    "merchant_account_id": "mrc_1",
    "external_reference": "order-1",
    "amount": 1500,
    "currency": "CLP",
    "description": None,
    "provider": "auto",
    "return_url": "https://shop.example/r",
    "metadata": {},
    "created_at": "2026-01-01T00:00:00.000Z",
    "timeline": [{"type": "payment_intent.created", "at": "2026-01-01T00:00:00.000Z"}],
}
POLICY = RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=8.0, jitter=False)
CREATE = {
    "merchant_account_id": "mrc_1",
    "external_reference": "order-1",
    "amount": 1500,
    "currency": "CLP",
    "return_url": "https://shop.example/r",
}


def error(status: int, code: str, details: dict[str, Any] | None = None) -> httpx.Response:
    body = {"error": {"code": code, "message": "m", "request_id": "req_x", "details": details or {}}}
    return httpx.Response(status, json=body, headers={"X-Request-Id": "req_x"})


class Script:
    """Answers requests from a list of outcomes (a Response or an exception to raise)."""

    def __init__(self, *outcomes: httpx.Response | Exception) -> None:
        self.outcomes = list(outcomes)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    @property
    def keys(self) -> list[str | None]:
        return [r.headers.get("idempotency-key") for r in self.requests]


def sync_client(script: Script, sleeps: list[float], policy: RetryPolicy = POLICY) -> PayorchClient:
    return PayorchClient(
        KEY,
        "http://payorch.test",
        transport=httpx.MockTransport(script),
        retry=policy,
        sleep=sleeps.append,
    )


def async_client(script: Script, sleeps: list[float]) -> AsyncPayorchClient:
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return AsyncPayorchClient(
        KEY, "http://payorch.test", transport=httpx.MockTransport(script), retry=POLICY, sleep=sleep
    )


def test_create_sends_key_auth_and_body_and_parses_the_intent() -> None:
    script = Script(httpx.Response(201, json=INTENT))
    intent = sync_client(script, []).create_payment_intent(**CREATE, metadata={"a": "b"})
    request = script.requests[0]
    assert request.method == "POST" and request.url.path == "/v1/payment-intents"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == {**CREATE, "metadata": {"a": "b"}}
    assert len(script.keys[0] or "") == 36  # a uuid4
    assert intent.id == "payi_1" and intent.amount == 1500
    assert intent.timeline[0].type == "payment_intent.created"


def test_network_error_then_503_then_success_reuses_one_key_and_backs_off() -> None:
    sleeps: list[float] = []
    script = Script(
        httpx.ConnectError("refused"),
        error(503, "CONNECTOR_UNAVAILABLE", {"retry_after_seconds": 7}),
        httpx.ReadTimeout("slow"),  # unknown outcome: safe only because the server dedupes by key
        httpx.Response(
            200,
            json={
                "payment_intent_id": "payi_1",
                "status": "REQUIRES_ACTION",
                "provider": "provider_a_redirect_post",
                "checkout": {
                    "type": "REDIRECT",
                    "url": "https://p/x",
                    "method": "POST",
                    "fields": {"token_ws": "t"},
                },
                "expires_at": "2026-01-01T00:10:00.000Z",
            },
        ),
    )
    checkout = sync_client(script, sleeps).create_checkout("payi_1")
    assert checkout.checkout.fields == {"token_ws": "t"}
    assert len(script.requests) == 4
    assert len(set(script.keys)) == 1 and script.keys[0] is not None
    # Exponential backoff for network errors, the server's retry_after_seconds for the 503.
    assert sleeps == [0.5, 7.0, 2.0]


def test_each_operation_gets_its_own_key_and_an_explicit_key_is_kept() -> None:
    script = Script(*(httpx.Response(201, json=INTENT) for _ in range(3)))
    client = sync_client(script, [])
    client.create_payment_intent(**CREATE)
    client.create_payment_intent(**CREATE)
    client.create_payment_intent(**CREATE, idempotency_key="order-1-attempt-1")
    assert script.keys[0] != script.keys[1]
    assert script.keys[2] == "order-1-attempt-1"


def test_429_honours_retry_after_then_gives_up_after_max_attempts() -> None:
    sleeps: list[float] = []
    script = Script(*(error(429, "RATE_LIMIT_EXCEEDED", {"retry_after_seconds": 2}) for _ in range(4)))
    with pytest.raises(RateLimitError) as caught:
        sync_client(script, sleeps).get_payment_intent("payi_1")
    assert len(script.requests) == 4 and sleeps == [2.0, 2.0, 2.0]
    assert caught.value.code == "RATE_LIMIT_EXCEEDED" and caught.value.status_code == 429
    assert caught.value.request_id == "req_x" and caught.value.retry_after_seconds == 2


def test_a_wait_longer_than_the_bound_is_not_slept() -> None:
    sleeps: list[float] = []
    script = Script(error(503, "CONNECTOR_UNAVAILABLE", {"retry_after_seconds": 3600}))
    with pytest.raises(ServiceUnavailableError):
        sync_client(script, sleeps).create_checkout("payi_1")
    assert sleeps == [] and len(script.requests) == 1


def test_retry_after_header_is_used_when_details_lack_it() -> None:
    sleeps: list[float] = []
    plain_503 = httpx.Response(503, text="busy", headers={"Retry-After": "3"})
    script = Script(plain_503, httpx.Response(200, json=INTENT))
    sync_client(script, sleeps).get_payment_intent("payi_1")
    assert sleeps == [3.0]


def test_backoff_doubles_up_to_the_cap_and_jitter_stays_within_half() -> None:
    policy = RetryPolicy(base_delay=1, max_delay=5, jitter=False)
    assert [policy.backoff(n) for n in range(1, 6)] == [1, 2, 4, 5, 5]
    jittered = RetryPolicy(base_delay=1, max_delay=5)
    assert all(1 <= jittered.backoff(2) <= 2 for _ in range(50))


def test_a_timeout_on_a_post_without_server_dedup_is_not_retried() -> None:
    """Creating a webhook endpoint twice would leave two endpoints: only retry if never sent."""
    sleeps: list[float] = []
    script = Script(httpx.ReadTimeout("slow"))
    with pytest.raises(PayorchTimeoutError) as caught:
        sync_client(script, sleeps).create_webhook_endpoint(url="https://shop.example/hook")
    assert len(script.requests) == 1 and caught.value.status_code is None
    assert caught.value.code == "TIMEOUT"
    # A connection that was never opened is safe to retry for any operation.
    script = Script(
        httpx.ConnectError("refused"),
        httpx.Response(
            201,
            json={
                "success": True,
                "data": {
                    "id": "whe_1",
                    "url": "https://shop.example/hook",
                    "enabled": True,
                    "events": [],
                    "secret": "a" * 64,
                },
            },
        ),
    )
    endpoint = sync_client(script, []).create_webhook_endpoint(url="https://shop.example/hook")
    assert endpoint.id == "whe_1" and endpoint.secret is not None
    assert endpoint.secret.get_secret_value() == "a" * 64 and "a" * 64 not in repr(endpoint)
    assert script.keys[0] == script.keys[1]


def test_network_errors_exhaust_into_a_connection_error() -> None:
    sleeps: list[float] = []
    script = Script(*(httpx.ConnectError("refused") for _ in range(4)))
    with pytest.raises(PayorchConnectionError) as caught:
        sync_client(script, sleeps).get_payment_intent("payi_1")
    assert caught.value.code == "NETWORK_ERROR" and sleeps == [0.5, 1.0, 2.0]


def test_idempotency_key_in_use_is_waited_for_with_the_same_key() -> None:
    sleeps: list[float] = []
    script = Script(
        error(409, "IDEMPOTENCY_KEY_IN_USE", {"retry_after_seconds": 1}),
        httpx.Response(201, json=INTENT),
    )
    sync_client(script, sleeps).create_payment_intent(**CREATE)
    assert sleeps == [1.0] and script.keys[0] == script.keys[1]


@pytest.mark.parametrize(
    ("response", "cls", "code"),
    [
        (error(401, "AUTHENTICATION_FAILED"), AuthenticationError, "AUTHENTICATION_FAILED"),
        (error(404, "RESOURCE_NOT_FOUND"), NotFoundError, "RESOURCE_NOT_FOUND"),
        (error(409, "IDEMPOTENCY_CONFLICT"), IdempotencyError, "IDEMPOTENCY_CONFLICT"),
        (error(409, "INVALID_STATE", {"status": "FAILED"}), InvalidStateError, "INVALID_STATE"),
        (
            httpx.Response(502, text="<html>bad gateway</html>"),
            UnexpectedResponseError,
            "UNEXPECTED_RESPONSE",
        ),
    ],
)
def test_errors_are_typed_and_never_retried(
    response: httpx.Response, cls: type[Exception], code: str
) -> None:
    sleeps: list[float] = []
    script = Script(response)
    with pytest.raises(cls) as caught:
        sync_client(script, sleeps).get_payment_intent("payi_1")
    assert caught.value.code == code  # type: ignore[attr-defined]
    assert caught.value.status_code == response.status_code  # type: ignore[attr-defined]
    assert len(script.requests) == 1 and sleeps == []


def test_ids_cannot_change_the_path() -> None:
    script = Script(httpx.Response(200, json=INTENT))
    sync_client(script, []).get_payment_intent("../payments?x=1")
    assert script.requests[0].url.raw_path == b"/v1/payment-intents/..%2Fpayments%3Fx%3D1"


def test_iter_payments_follows_next_cursor_until_null() -> None:
    def page(ids: list[str], cursor: str | None) -> httpx.Response:
        items = [{"id": i, "status": "AUTHORIZED", "amount": 1, "currency": "CLP"} for i in ids]
        return httpx.Response(200, json={"items": items, "next_cursor": cursor})

    script = Script(page(["pay_1", "pay_2"], "c1"), page(["pay_3"], "c2"), page([], None))
    client = sync_client(script, [])
    ids = [p.id for p in client.iter_payments(status="AUTHORIZED", limit=2)]
    assert ids == ["pay_1", "pay_2", "pay_3"]
    params = [dict(r.url.params) for r in script.requests]
    assert params == [
        {"status": "AUTHORIZED", "limit": "2"},
        {"status": "AUTHORIZED", "limit": "2", "cursor": "c1"},
        {"status": "AUTHORIZED", "limit": "2", "cursor": "c2"},
    ]


def test_a_success_body_that_is_not_the_resource_is_an_unexpected_response() -> None:
    script = Script(httpx.Response(200, json={"unexpected": True}))
    with pytest.raises(UnexpectedResponseError):
        sync_client(script, []).get_payment_intent("payi_1")


def test_the_api_key_is_not_in_the_clients_repr() -> None:
    assert KEY not in repr(sync_client(Script(), []))


async def test_async_client_retries_with_one_key_and_iterates_pages() -> None:
    sleeps: list[float] = []
    script = Script(
        httpx.ConnectError("refused"),
        error(429, "RATE_LIMIT_EXCEEDED", {"retry_after_seconds": 1}),
        httpx.Response(
            201,
            json={
                "refund_id": "rfd_1",
                "payment_id": "pay_1",
                "status": "PENDING",
                "amount": 500,
                "currency": "CLP",
            },
        ),
        httpx.Response(
            200,
            json={
                "items": [
                    {
                        "id": "evt_1",
                        "type": "payment.authorized",
                        "data": {"payment_intent_id": "payi_1"},
                    }
                ],
                "next_cursor": "n",
            },
        ),
        httpx.Response(
            200,
            json={
                "items": [
                    {
                        "id": "evt_2",
                        "type": "refund.requested",
                        "data": {"payment_intent_id": "payi_1"},
                    }
                ],
                "next_cursor": None,
            },
        ),
    )
    async with async_client(script, sleeps) as client:
        refund = await client.create_refund("pay_1", amount=500, reason="customer")
        events = [e async for e in client.iter_events(payment_intent_id="payi_1")]
    assert refund.refund_id == "rfd_1" and refund.status == "PENDING"
    assert json.loads(script.requests[0].content) == {"amount": 500, "reason": "customer"}
    assert script.keys[0] == script.keys[1] == script.keys[2] and script.keys[3] is None
    assert sleeps == [0.5, 1.0]
    assert [e.id for e in events] == ["evt_1", "evt_2"]
    assert events[0].payment_intent_id == "payi_1"


async def test_async_errors_are_typed() -> None:
    script = Script(error(404, "RESOURCE_NOT_FOUND"))
    async with async_client(script, []) as client:
        with pytest.raises(NotFoundError) as caught:
            await client.get_payment("pay_missing")
    assert caught.value.request_id == "req_x"


@pytest.mark.parametrize(
    ("call", "method", "path"),
    [
        (lambda c: c.list_refunds("pay_1"), "GET", "/v1/payments/pay_1/refunds"),
        (lambda c: c.list_webhook_endpoints(), "GET", "/v1/admin/webhook-endpoints"),
        (lambda c: c.get_webhook_endpoint("whe_1"), "GET", "/v1/admin/webhook-endpoints/whe_1"),
        (
            lambda c: c.update_webhook_endpoint("whe_1", enabled=False),
            "PATCH",
            "/v1/admin/webhook-endpoints/whe_1",
        ),
        (
            lambda c: c.delete_webhook_endpoint("whe_1"),
            "DELETE",
            "/v1/admin/webhook-endpoints/whe_1",
        ),
        (
            lambda c: c.list_webhook_deliveries("whe_1"),
            "GET",
            "/v1/admin/webhook-endpoints/whe_1/deliveries",
        ),
        (
            lambda c: c.retry_webhook_delivery("whe_1", "whd_1"),
            "POST",
            "/v1/admin/webhook-endpoints/whe_1/deliveries/whd_1/retry",
        ),
        (
            lambda c: c.list_connectors("mrc_1"),
            "GET",
            "/v1/admin/merchant-accounts/mrc_1/connectors",
        ),
        (
            lambda c: c.create_connector("mrc_1", provider="provider_a_redirect_post", mode="MOCK"),
            "POST",
            "/v1/admin/merchant-accounts/mrc_1/connectors",
        ),
        (
            lambda c: c.update_connector("mrc_1", "cfg_1", priority=2),
            "PATCH",
            "/v1/admin/merchant-accounts/mrc_1/connectors/cfg_1",
        ),
        (lambda c: c.create_api_credential(name="ci"), "POST", "/v1/admin/api-credentials"),
        (lambda c: c.list_api_credentials(), "GET", "/v1/admin/api-credentials"),
        (lambda c: c.revoke_api_credential("key_1"), "DELETE", "/v1/admin/api-credentials/key_1"),
        (lambda c: c.get_payment("pay_1"), "GET", "/v1/payments/pay_1"),
        (lambda c: c.capture_payment("pay_1", 500), "POST", "/v1/payments/pay_1/capture"),
        (lambda c: c.void_payment("pay_1"), "POST", "/v1/payments/pay_1/void"),
        (lambda c: c.list_events(type="payment.authorized"), "GET", "/v1/events"),
        (
            lambda c: c.get_webhook_delivery("whe_1", "whd_1"),
            "GET",
            "/v1/admin/webhook-endpoints/whe_1/deliveries/whd_1",
        ),
        (
            lambda c: c.simulator_set_fault("provider_a_redirect_post", "error"),
            "POST",
            "/simulator/controls/faults",
        ),
        (lambda c: c.simulator_settle("payi_1", "approve"), "POST", "/simulator/controls/settle"),
    ],
)
def test_every_operation_hits_its_documented_route(
    call: Callable[[PayorchClient], Any], method: str, path: str
) -> None:
    bodies = {
        "/v1/payments/pay_1/refunds": {"items": [], "next_cursor": None},
        "/v1/admin/webhook-endpoints": [],
        "/v1/admin/merchant-accounts/mrc_1/connectors": [],
        "/v1/admin/api-credentials": [],
        "/v1/events": {"items": [], "next_cursor": None},
        "/v1/admin/webhook-endpoints/whe_1/deliveries": {"items": [], "next_cursor": None},
    }
    one = {
        "id": "x_1",
        "status": "PENDING",
        "url": "https://s/h",
        "provider": "p",
        "mode": "MOCK",
        "enabled": True,
        "priority": 1,
    }
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "DELETE":
            return httpx.Response(204)
        if request.method == "POST" and request.url.path.endswith("/api-credentials"):
            return httpx.Response(201, json={"id": "key_1", "api_key": KEY})
        body = bodies.get(request.url.path, one) if request.method == "GET" else one
        return httpx.Response(200, json=body)

    client = PayorchClient(KEY, "http://payorch.test", transport=httpx.MockTransport(handler))
    call(client)
    assert (seen[0].method, seen[0].url.path) == (method, path)
    if method == "POST" and path.startswith("/v1/") and "retry" not in path:
        assert seen[0].headers.get("idempotency-key")


def test_async_client_is_generated_from_the_sync_one() -> None:
    """_async.py / _async_admin.py are _sync.py / _sync_admin.py awaited: regenerate with\n    tests/client/generate_async.py."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from tests.client.generate_async import CLIENT, generate, generate_admin

    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    for make, source, target in (
        (generate, "_sync.py", "_async.py"),
        (generate_admin, "_sync_admin.py", "_async_admin.py"),
    ):
        formatted = subprocess.run(  # noqa: S603 - our own ruff on our own source
            [ruff, "format", "--line-length", "100", "--stdin-filename", target, "-"],
            input=make((CLIENT / source).read_text()),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert formatted == (CLIENT / target).read_text(), f"{target} drifted from {source}"
