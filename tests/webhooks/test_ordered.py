"""Ordered delivery through HTTP (`ordered: true`): for one payment intent, a notice is not
attempted while an earlier one to the same endpoint is PENDING; other intents are not held up;
the default (`ordered: false`) stays at least once, in any order."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from tests.kit import Sandbox
from tests.webhooks.helpers import BASE, CREATED, Hooks, create_intent
from tests.webhooks.receiver import Receiver

# No receiver here answers late: a short webhook timeout would only turn a slow loopback answer
# on a loaded machine into a failed attempt (0.5 s did, once, at four test workers).
pytestmark = pytest.mark.settings(webhook_retry_schedule="1,1,1,1,1,1", webhook_timeout_seconds=5.0)


async def _endpoint(client: httpx.AsyncClient, app: Sandbox, body: dict[str, Any]) -> str:
    response = await client.post(BASE, json=body, headers=app.headers)
    assert response.status_code == 201, response.text
    assert response.json()["data"]["ordered"] is body.get("ordered", False)
    endpoint_id: str = response.json()["data"]["id"]
    CREATED.append(endpoint_id)
    return endpoint_id


async def _cancel(client: httpx.AsyncClient, app: Sandbox, intent_id: str) -> None:
    response = await client.post(
        f"/v1/payment-intents/{intent_id}/cancel",
        headers={**app.headers, "Idempotency-Key": f"cancel-{intent_id}"},
    )
    assert response.status_code == 200, response.text


def _types(receiver: Receiver, path: str) -> list[tuple[str, str]]:
    bodies = [orjson.loads(r.body) for r in receiver.at(path)]
    return [(b["data"]["payment_intent_id"], b["type"]) for b in bodies]


async def test_an_ordered_endpoint_waits_for_the_intents_earlier_notice(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    ordered_id = await _endpoint(client, sandbox, {"url": receiver.url("/status/503"), "ordered": True})
    unordered_id = await _endpoint(client, sandbox, {"url": receiver.url("/status/500")})
    first = await create_intent(client, sandbox, "first")
    assert await deliveries.run_until_idle(runtime) == 2  # both fail; retried in 1 s
    await _cancel(client, sandbox, first)  # payment.cancelled, due at once
    second = await create_intent(client, sandbox, "second")  # another intent: not held up

    # The unordered endpoint gets both new notices now; the ordered one only the other
    # intent's: the first intent's cancellation waits for its pending creation notice.
    assert await deliveries.run_until_idle(runtime) == 3
    assert sorted(_types(receiver, "/status/500")[1:]) == sorted(
        [(first, "payment.cancelled"), (second, "payment_intent.created")]
    )
    assert _types(receiver, "/status/503") == [
        (first, "payment_intent.created"),
        (second, "payment_intent.created"),
    ]

    # The ordered endpoint recovers: the creation notice first, then the cancellation.
    patch = {"url": receiver.url("/ordered")}
    await client.patch(f"{BASE}/{ordered_id}", json=patch, headers=sandbox.headers)
    await client.patch(f"{BASE}/{unordered_id}", json={"enabled": False}, headers=sandbox.headers)
    clock.advance(1)
    await deliveries.run_until_idle(runtime)
    got = _types(receiver, "/ordered")
    assert sorted(got) == sorted(
        [
            (first, "payment_intent.created"),
            (second, "payment_intent.created"),
            (first, "payment.cancelled"),
        ]
    )
    assert got.index((first, "payment_intent.created")) < got.index((first, "payment.cancelled"))
    [creation, cancellation] = [r for r in receiver.at("/ordered") if first in r.body.decode()]
    assert creation.at <= cancellation.at  # the second was sent after the first one's answer
