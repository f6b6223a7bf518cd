"""The request line and provider failures in the JSON logs, read back through HTTP requests on
SQLite and PostgreSQL: one line per request with its route template, status, duration, request
id and application; a failing provider call at WARNING with provider, operation and latency;
never a key, a query string or a body."""

from __future__ import annotations

import httpx

from payorch.runtime import Runtime
from tests.kit import Sandbox, intent_body, mock_sandbox
from tests.observability.capture import Capture, lines_of, logs
from tests.providers.helpers import A, B, checkout, create_intent, set_fault

__all__ = ["logs"]  # the fixture

REQUESTS = "payorch.requests"
SECRET_QUERY = "token-in-a-query-0123456789"
SECRET_BODY = "order-in-a-body-0123456789"


def only(capture: Capture, request_id: str) -> dict[str, object]:
    mine = [line for line in lines_of(capture, REQUESTS) if line["request_id"] == request_id]
    assert len(mine) == 1, mine  # exactly one line per request
    return mine[0]


async def test_one_line_per_request_with_route_template_status_duration_and_application(
    client: httpx.AsyncClient, logs: Capture, sandbox: Sandbox
) -> None:
    body = intent_body(
        sandbox, external_reference=SECRET_BODY, amount=1000, return_url="https://shop.example/r"
    )
    created = await client.post(
        "/v1/payment-intents", json=body, headers={**sandbox.headers, "X-Request-Id": "req-create"}
    )
    assert created.status_code == 201, created.text
    intent_id = created.json()["id"]
    read = await client.get(
        f"/v1/payment-intents/{intent_id}?access_token={SECRET_QUERY}",
        headers={**sandbox.headers, "X-Request-Id": "req-read"},
    )
    assert read.status_code == 200
    await client.get(f"/v1/payment-intents/{intent_id}", headers={"X-Request-Id": "req-anon"})
    await client.get("/no/such/path", headers={"X-Request-Id": "req-lost"})

    line = only(logs, "req-create")
    assert line["method"] == "POST" and line["route"] == "/v1/payment-intents"
    assert line["status"] == 201 and line["application_id"] == sandbox.application_id
    assert line["level"] == "INFO"
    line = only(logs, "req-read")
    assert line["route"] == "/v1/payment-intents/{payment_intent_id}"  # the template, no id
    assert line["status"] == 200 and line["application_id"] == sandbox.application_id
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    line = only(logs, "req-anon")
    assert line["status"] == 401 and line["application_id"] is None
    line = only(logs, "req-lost")
    assert line["status"] == 404 and line["route"] == "<unmatched>"

    everything = logs.everything()  # raw records too, before any redaction
    for secret in (sandbox.api_key, sandbox.api_key.rsplit("_", 1)[1]):
        assert secret not in everything
    # The service's own lines (not the test client's httpx lines, nor the drivers' DEBUG SQL).
    served = "".join(str(line) for line in logs.lines() if str(line["logger"]).startswith("payorch"))
    assert SECRET_QUERY not in served and SECRET_BODY not in served
    assert intent_id not in "".join(str(line) for line in lines_of(logs, REQUESTS))


async def test_a_failing_provider_call_is_a_warning_with_provider_operation_and_latency(
    client: httpx.AsyncClient, runtime: Runtime, logs: Capture
) -> None:
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, "error")
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"])
    assert response.status_code == 200 and response.json()["provider"] == B  # failed over
    calls = lines_of(logs, "payorch.providers")
    [failed] = [c for c in calls if c["provider"] == A and c["operation"] == "create"]
    assert failed["level"] == "WARNING" and failed["outcome"] == "http_5xx"
    assert isinstance(failed["latency_ms"], float) and failed["latency_ms"] >= 0
    [answered] = [c for c in calls if c["provider"] == B and c["operation"] == "create"]
    assert answered["level"] == "INFO" and answered["outcome"] == "ok"
    assert sandbox.api_key not in logs.everything()
