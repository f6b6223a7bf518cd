"""Logs: JSON lines that carry the request id; no API key, provider credential or webhook
secret ever reaches them (checked before redaction, and redaction as a safety net)."""

from __future__ import annotations

import io
import json
import logging
from datetime import UTC, datetime

import httpx
import pytest
from fastapi import Request
from hypothesis import given
from hypothesis import strategies as st

from payorch.app import create_app
from payorch.logs import MASK, build_handler, iso_millis, redact
from payorch.runtime import Runtime
from tests.kit import Sandbox, new_application
from tests.observability.capture import Capture, logs

__all__ = ["logs"]  # the fixture


@pytest.fixture
def app_client(runtime: Runtime) -> httpx.AsyncClient:
    app = create_app(runtime=runtime)
    noisy = logging.getLogger("tests.route")

    async def chatty(request: Request) -> dict[str, str]:
        noisy.info("handling %s", request.url.path)
        noisy.warning("about to fail")
        # A careless handler: logs every header and crashes with the key in the message.
        noisy.debug("headers: %s", dict(request.headers))
        raise RuntimeError(f"boom with {request.headers.get('authorization')}")

    app.add_api_route("/test/chatty", chatty, methods=["GET"])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


async def test_every_line_logged_during_a_request_carries_its_request_id(
    app_client: httpx.AsyncClient, logs: Capture, sandbox: Sandbox
) -> None:
    async with app_client as http:
        response = await http.get(
            "/test/chatty", headers={**sandbox.headers, "X-Request-Id": "req-trace-123"}
        )
    assert response.status_code == 500
    assert response.json()["error"]["request_id"] == "req-trace-123"
    mine = [line for line in logs.lines() if line["logger"] in ("tests.route", "payorch.http")]
    assert {line["logger"] for line in mine} == {"tests.route", "payorch.http"}
    assert len(mine) >= 4 and all(line["request_id"] == "req-trace-123" for line in mine)
    crash = next(line for line in mine if line["logger"] == "payorch.http")
    assert "RuntimeError" in str(crash["traceback"])
    for line in mine:
        assert set(line) >= {"time", "level", "logger", "message", "request_id"}


async def test_the_safety_net_masks_keys_and_bearer_tokens(
    app_client: httpx.AsyncClient, logs: Capture, sandbox: Sandbox
) -> None:
    async with app_client as http:
        await http.get("/test/chatty", headers=sandbox.headers)
    # The careless handler above did log the key (raw)...
    assert sandbox.api_key in logs.everything()
    # ...but no JSON line carries it, in the message or in the traceback.
    text = logs.stream.getvalue()
    assert sandbox.api_key not in text
    assert sandbox.api_key.rsplit("_", 1)[1] not in text  # not even the secret part alone
    assert MASK in text


async def test_api_keys_never_reach_the_logs(
    client: httpx.AsyncClient,
    runtime: Runtime,
    logs: Capture,
    sandbox: Sandbox,
    intent_body: dict[str, object],
) -> None:
    other = await new_application(runtime)  # creating a key, as the CLI does
    wrong = sandbox.api_key[:-4] + "0000"  # well-formed, unknown secret
    for headers in (
        sandbox.headers,
        other.headers,
        {"Authorization": f"Bearer {wrong}"},
        {"Authorization": "Bearer not-a-key-at-all-1234"},
        {"Authorization": sandbox.api_key},  # missing the Bearer word
    ):
        await client.post(
            "/v1/payment-intents", json=intent_body, headers={**headers, "Idempotency-Key": "k"}
        )
        await client.get("/v1/payment-intents/payi_x", headers=headers)
    await client.post(
        "/v1/payment-intents",
        content=b"{not json",
        headers={**sandbox.headers, "content-type": "application/json"},
    )
    everything = logs.everything()
    assert logs.raw, "the capture saw nothing: the test would prove nothing"
    for secret in (sandbox.api_key, other.api_key, wrong, "not-a-key-at-all-1234"):
        assert secret not in everything
        assert secret.rsplit("_", 1)[-1] not in everything


async def test_webhook_secrets_never_reach_the_logs(
    client: httpx.AsyncClient, logs: Capture, sandbox: Sandbox
) -> None:
    response = await client.post(
        "/v1/admin/webhook-endpoints",
        json={"url": "http://127.0.0.1:8080/hook"},
        headers=sandbox.headers,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    secret = (body.get("data") or body)["secret"]
    assert len(secret) == 64
    assert secret not in logs.everything()


async def test_provider_credentials_never_reach_the_logs(
    client: httpx.AsyncClient, logs: Capture, sandbox: Sandbox
) -> None:
    credentials = {"commerce_code": "597055555532", "api_key": "provider-secret-" + "z" * 24}
    response = await client.post(
        f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors",
        json={
            "provider": "provider_a_redirect_post",
            "mode": "SANDBOX",
            "enabled": True,
            "priority": 1,
            "credentials": credentials,
        },
        headers=sandbox.headers,
    )
    assert response.status_code == 201, response.text
    assert "credentials" not in response.json() and credentials["api_key"] not in response.text
    assert credentials["api_key"] not in logs.everything()


@pytest.mark.parametrize(
    ("text", "kept", "gone"),
    [
        ("key pay_sb_0123456789ab_" + "c" * 48, "pay_sb_0123456789ab_", "c" * 48),
        ("key pay_live_0123456789ab_" + "d" * 48, "pay_live_", "d" * 48),
        ("Authorization: Bearer abcdefghijklmnop", "Authorization", "abcdefghijklmnop"),
        ('{"api_key": "sk_live_123456", "commerce_code": "597"}', "597", "sk_live_123456"),
        (
            "credentials={'access_token': 'APP-1234', 'webhook_secret': 'ws-99'}",
            "credentials",
            "APP-1234",
        ),
        (
            "credentials={'access_token': 'APP-1234', 'webhook_secret': 'ws-99'}",
            "credentials",
            "ws-99",
        ),
        ("endpoint secret " + "ab" * 32, "endpoint secret", "ab" * 32),
    ],
)
def test_redact(text: str, kept: str, gone: str) -> None:
    cleaned = redact(text)
    assert kept in cleaned and gone not in cleaned and MASK in cleaned


def test_extra_fields_become_json_fields_and_terminal_colours_do_not() -> None:
    stream = io.StringIO()
    logger = logging.getLogger("tests.extra")
    handler = build_handler(stream)
    logger.addHandler(handler)
    logger.propagate, old = False, logger.propagate
    try:
        logger.warning("delivery %s failed", "whd_1", extra={"attempt": 3, "color_message": "\x1b[31m"})
    finally:
        logger.removeHandler(handler)
        logger.propagate = old
    line = json.loads(stream.getvalue())
    assert line["message"] == "delivery whd_1 failed" and line["attempt"] == 3
    assert "color_message" not in line and line["request_id"] == "-"


@given(st.floats(min_value=0, max_value=2**33, allow_nan=False, allow_infinity=False))
def test_a_line_s_time_is_iso_8601_to_the_millisecond(created: float) -> None:
    # The formatter formats each second once (logs.iso_millis): the text must be the standard's.
    assert iso_millis(created) == datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
    assert iso_millis(created) == iso_millis(created)  # again, from the remembered second
