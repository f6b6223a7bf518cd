"""Every error the foundation produces has the API's error shape, a request id, and the right code."""

from __future__ import annotations

import httpx
import pytest

from payorch.app import create_app
from payorch.runtime import Runtime
from tests.kit import Sandbox, assert_error


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Basic abc",
        "Bearer ",
        "Bearer pay_sb_nothex",
        "Bearer pay_sb_000000000000_" + "0" * 48,
        "Bearer pay_test_000000000000_" + "0" * 48,
    ],
)
async def test_authentication_failures(client: httpx.AsyncClient, authorization: str | None) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = await client.get("/v1/payment-intents/payi_x", headers=headers)
    assert_error(response, 401, "AUTHENTICATION_FAILED")
    assert response.headers["www-authenticate"] == "Bearer"


async def test_right_prefix_wrong_secret_is_refused(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    wrong = sandbox.api_key[:-4] + ("0000" if not sandbox.api_key.endswith("0000") else "1111")
    response = await client.get("/v1/payment-intents/payi_x", headers={"Authorization": f"Bearer {wrong}"})
    assert_error(response, 401, "AUTHENTICATION_FAILED")


async def test_sandbox_key_with_live_tag_is_refused(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    live = sandbox.api_key.replace("pay_sb_", "pay_live_", 1)
    response = await client.get("/v1/payment-intents/payi_x", headers={"Authorization": f"Bearer {live}"})
    assert_error(response, 401, "AUTHENTICATION_FAILED")


async def test_unknown_intent_is_404(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    response = await client.get("/v1/payment-intents/payi_nope", headers=sandbox.headers)
    assert_error(response, 404, "RESOURCE_NOT_FOUND")


async def test_unknown_route_is_404(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    response = await client.get("/v1/nothing-here", headers=sandbox.headers)
    assert_error(response, 404, "RESOURCE_NOT_FOUND")


async def test_wrong_method_is_405(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    response = await client.delete("/v1/payment-intents", headers=sandbox.headers)
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    # RFC 9110: a 405 lists the path's methods; its GET and POST are separate routes.
    assert response.headers["allow"] == "GET, POST"
    assert response.json()["error"]["details"] == {"allowed_methods": ["GET", "POST"]}


async def test_every_405_names_the_methods_of_its_path(client: httpx.AsyncClient) -> None:
    response = await client.request("TRACE", "/v1/payment-intents/payi_x/cancel")
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response.headers["allow"] == "POST"
    assert "use POST" in response.json()["error"]["message"]


async def test_malformed_json_is_400(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    response = await client.post(
        "/v1/payment-intents",
        content=b'{"amount": 1',
        headers={**sandbox.headers, "Content-Type": "application/json"},
    )
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["errors"][0]["field"] == "body"  # type: ignore[index]


async def test_non_object_json_is_400(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    response = await client.post("/v1/payment-intents", json=[1, 2], headers=sandbox.headers)
    assert_error(response, 400, "VALIDATION_ERROR")


async def test_wrong_content_type_is_415(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    response = await client.post(
        "/v1/payment-intents",
        content=b"amount=1",
        headers={**sandbox.headers, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE")


async def test_oversized_body_is_413(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    big = b'{"description": "' + b"x" * (65 * 1024) + b'"}'
    response = await client.post(
        "/v1/payment-intents", content=big, headers={**sandbox.headers, "Content-Type": "application/json"}
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


async def test_oversized_chunked_body_is_413(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    async def chunks():  # no Content-Length: the limit must be counted as bytes arrive
        yield b'{"description": "'
        for _ in range(70):
            yield b"x" * 1024
        yield b'"}'

    response = await client.post(
        "/v1/payment-intents",
        content=chunks(),
        headers={**sandbox.headers, "Content-Type": "application/json"},
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


async def test_bad_idempotency_key_is_400(client: httpx.AsyncClient, sandbox: Sandbox, intent_body) -> None:
    response = await client.post(
        "/v1/payment-intents", json=intent_body, headers={**sandbox.headers, "Idempotency-Key": "x" * 256}
    )
    assert_error(response, 400, "VALIDATION_ERROR")


async def test_incoming_request_id_is_echoed_and_a_bad_one_replaced(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    response = await client.get(
        "/v1/payment-intents/payi_x", headers={**sandbox.headers, "X-Request-Id": "abc-123"}
    )
    assert response.headers["x-request-id"] == "abc-123"
    assert response.json()["error"]["request_id"] == "abc-123"
    response = await client.get(
        "/v1/payment-intents/payi_x", headers={**sandbox.headers, "X-Request-Id": "bad id\twith junk"}
    )
    assert response.headers["x-request-id"].startswith("req_")


async def test_success_responses_carry_a_request_id(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body
) -> None:
    response = await client.post("/v1/payment-intents", json=intent_body, headers=sandbox.headers)
    assert response.status_code == 201
    assert response.headers["x-request-id"].startswith("req_")


async def test_unhandled_exception_is_500_and_reveals_nothing(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(runtime=runtime)

    @app.get("/v1/boom")
    async def boom() -> None:
        raise RuntimeError("secret internals: password=hunter2")

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        response = await http.get("/v1/boom")
    error = assert_error(response, 500, "INTERNAL_ERROR")
    assert "hunter2" not in response.text and "RuntimeError" not in response.text
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and getattr(logged[0], "request_id", None) == error["request_id"]
