"""Simulated provider B: merchant orders, the settle control's statuses, and notices sent again
on request (duplicates, newest first, IPN style, merchant_order topic). Through HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from payorch.clock import Clock, FrozenClock
from payorch.providers.provider_b.signature import verify_signature
from payorch.runtime import Runtime
from payorch.simulator.provider_b.credentials import webhook_secret
from tests.kit import Sandbox, new_application
from tests.simulator.helpers import B, Receiver, b_headers, create_b, pay_b, query_of


async def _two_attempts(
    sim: httpx.AsyncClient, headers: dict[str, str], reference: str, clock: Clock
) -> list[str]:
    """A rejected payment, then an approved one a second later, on one preference; their ids.
    (B orders a preference's payments by date_created: under a frozen clock two would tie.)"""
    assert isinstance(clock, FrozenClock)
    preference = await create_b(sim, headers, reference=reference)
    rejected = query_of(await pay_b(sim, preference["id"], "reject"))["payment_id"]
    clock.advance(1)
    approved = query_of(await pay_b(sim, preference["id"], "approve"))["payment_id"]
    return [rejected, approved]


async def test_one_merchant_order_collects_the_preferences_attempts(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    rejected, approved = await _two_attempts(sim, headers, "payi_mo", runtime.clock)
    payments = [
        (await sim.get(f"{B}/v1/payments/{pid}", headers=headers)).json() for pid in (rejected, approved)
    ]
    order_id = payments[0]["order"]["id"]
    assert payments[1]["order"]["id"] == order_id
    order = (await sim.get(f"{B}/merchant_orders/{order_id}", headers=headers)).json()
    assert order["external_reference"] == "payi_mo" and order["status"] == "closed"
    assert [(p["id"], p["status"]) for p in order["payments"]] == [
        (int(rejected), "rejected"),
        (int(approved), "approved"),
    ]
    other = await new_application(runtime)
    foreign = await sim.get(
        f"{B}/merchant_orders/{order_id}", headers=b_headers(runtime, other.application_id)
    )
    assert foreign.status_code == 404
    assert (await sim.get(f"{B}/merchant_orders/12x", headers=headers)).status_code == 404


async def _notify(sim: httpx.AsyncClient, sandbox: Sandbox, **body: Any) -> httpx.Response:
    return await sim.post("/simulator/controls/notifications", json=body, headers=sandbox.headers)


async def test_notices_again_duplicated_newest_first_and_signed(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, receiver: Receiver
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    rejected, approved = await _two_attempts(sim, headers, "payi_again", runtime.clock)
    receiver.received.clear()
    answer = await _notify(sim, sandbox, payment_intent_id="payi_again", copies=2, order="newest_first")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "payment_intent_id": "payi_again",
        "notifications": 4,
        "payment_ids": [approved, approved, rejected, rejected],
    }
    assert [r["query"] for r in receiver.received] == [
        {"data.id": pid, "type": "payment"} for pid in (approved, approved, rejected, rejected)
    ]
    secret = webhook_secret(runtime.cipher, sandbox.application_id)
    for received in receiver.received:
        signed = verify_signature(secret, received["headers"], received["query"], now=runtime.clock.now())
        assert signed == received["query"]["data.id"]


async def test_ipn_style_and_merchant_order_topic(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, receiver: Receiver
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    _, approved = await _two_attempts(sim, headers, "payi_ipn", runtime.clock)
    order_id = str((await sim.get(f"{B}/v1/payments/{approved}", headers=headers)).json()["order"]["id"])
    receiver.received.clear()
    assert (await _notify(sim, sandbox, payment_intent_id="payi_ipn", style="ipn")).status_code == 200
    assert (
        await _notify(sim, sandbox, payment_intent_id="payi_ipn", style="ipn", topic="merchant_order")
    ).status_code == 200
    assert (
        await _notify(sim, sandbox, payment_intent_id="payi_ipn", topic="merchant_order")
    ).status_code == 200
    # Found by what they name, not by position: a notice of the first two attempts may still
    # arrive after the clear (its quick retries), and the two payments' notices in either order.
    queries = [r["query"] for r in receiver.received]
    assert {"topic": "merchant_order", "id": order_id} in queries
    assert {"data.id": order_id, "type": "topic_merchant_order_wh"} in queries
    ipns = [r for r in receiver.received if r["query"] == {"topic": "payment", "id": approved}]
    assert len(ipns) == 1, queries
    ipn = ipns[0]
    assert "x-signature" not in ipn["headers"]  # the older style is not signed
    assert b'"topic":"payment"' in ipn["body"] and f"/v1/payments/{approved}".encode() in ipn["body"]


async def test_settle_moves_payments_through_every_status(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    preference = await create_b(sim, headers, reference="payi_statuses")
    paid = query_of(await pay_b(sim, preference["id"], "review"))
    payment_id = paid["payment_id"]
    assert paid["status"] == "in_process"

    async def status_after(outcome: str) -> tuple[str, str]:
        answer = await sim.post(
            "/simulator/controls/settle",
            json={"payment_intent_id": "payi_statuses", "outcome": outcome},
            headers=sandbox.headers,
        )
        assert answer.status_code == 200, answer.text
        body = (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()
        return body["status"], body["status_detail"]

    assert await status_after("approve") == ("approved", "accredited")
    assert await status_after("mediation") == ("in_mediation", "in_mediation")
    assert await status_after("mediation_won") == ("approved", "accredited")
    assert await status_after("chargeback") == ("charged_back", "in_process")
    assert await status_after("chargeback_lost") == ("charged_back", "settled")
    nothing = await sim.post(
        "/simulator/controls/settle",
        json={"payment_intent_id": "payi_statuses", "outcome": "chargeback_won"},
        headers=sandbox.headers,
    )
    assert nothing.status_code == 404  # that chargeback already ended
