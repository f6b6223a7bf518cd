"""Provider B's checkout page, submitted as a browser would; back URLs and signed notifications."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.db import Phases
from payorch.runtime import Runtime
from payorch.simulator.outbox import sender
from payorch.simulator.provider_b.credentials import webhook_secret
from payorch.simulator.provider_b.notify import NOTIFIER
from tests.databases import own_database
from tests.kit import Sandbox
from tests.simulator.helpers import (
    B_PAGE,
    RETURN_B,
    B,
    Receiver,
    b_headers,
    create_b,
    pay_b,
    query_of,
)

database_url = own_database  # the notification job sweeps the database: this module gets its own

PARAMS = {
    "collection_id",
    "collection_status",
    "payment_id",
    "status",
    "external_reference",
    "payment_type",
    "merchant_order_id",
    "preference_id",
    "site_id",
    "processing_mode",
    "merchant_account_id",
}


def assert_signed(
    runtime: Runtime, application_id: str, hook: dict[str, object], payment_id: int
) -> dict[str, object]:
    headers = hook["headers"]
    assert isinstance(headers, dict)
    assert hook["query"] == {"data.id": str(payment_id), "type": "payment"}
    parts = dict(p.split("=", 1) for p in headers["x-signature"].split(","))
    manifest = f"id:{payment_id};request-id:{headers['x-request-id']};ts:{parts['ts']};"
    expected = hmac.new(
        webhook_secret(runtime.cipher, application_id).encode(), manifest.encode(), hashlib.sha256
    ).hexdigest()
    assert hmac.compare_digest(parts["v1"], expected)
    body = json.loads(hook["body"])  # type: ignore[arg-type]
    assert body["type"] == "payment" and body["api_version"] == "v1" and body["live_mode"] is False
    assert body["data"] == {"id": str(payment_id)}
    return dict(body)


async def test_page_shows_total_items_merchant_and_buttons(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    preference = await create_b(sim, b_headers(runtime, sandbox.application_id))
    page = await sim.get(preference["init_point"].removeprefix("http://testserver"))
    assert page.status_code == 200
    assert "$1.500" in page.text and "$750" in page.text and "Book" in page.text and "shop" in page.text
    assert re.findall(r'name="outcome" value="(\w+)"', page.text) == [
        "approve",
        "reject",
        "pending",
        "review",
        "cancel",
    ]


async def test_unknown_preference_page_is_404(sim: httpx.AsyncClient) -> None:
    assert (await sim.get(B_PAGE, params={"pref_id": "nope"})).status_code == 404
    assert (await sim.get(B_PAGE)).status_code == 404
    assert (await pay_b(sim, "nope", "approve")).status_code == 404
    assert (await pay_b(sim, "nope", "steal")).status_code == 400


async def test_approve_goes_to_success_and_notifies_signed(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, receiver: Receiver
) -> None:
    preference = await create_b(sim, b_headers(runtime, sandbox.application_id), reference="payi_ok")
    back = await pay_b(sim, preference["id"], "approve")
    assert back.status_code == 303 and back.headers["location"].startswith(RETURN_B + "payi_ok?")
    params = query_of(back)
    assert set(params) == PARAMS
    assert params["status"] == params["collection_status"] == "approved"
    assert params["payment_id"] == params["collection_id"] and params["external_reference"] == "payi_ok"
    assert params["preference_id"] == preference["id"] and params["payment_type"] == "credit_card"
    assert params["site_id"] == "MLC" and params["processing_mode"] == "aggregator"
    assert len(receiver.received) == 1
    body = assert_signed(runtime, sandbox.application_id, receiver.received[0], int(params["payment_id"]))
    assert body["action"] == "payment.created"


async def test_reject_goes_to_failure_and_notifies(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, receiver: Receiver
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    preference = await create_b(sim, headers, reference="payi_ko")
    back = await pay_b(sim, preference["id"], "reject")
    assert back.headers["location"].startswith(RETURN_B + "payi_ko?leg=failure&")
    params = query_of(back)
    assert params["status"] == "rejected"
    payment = (await sim.get(f"{B}/v1/payments/{params['payment_id']}", headers=headers)).json()
    assert payment["status"] == "rejected" and payment["status_detail"].startswith("cc_rejected")
    assert len(receiver.received) == 1
    # A rejected buyer may try again on the same checkout.
    page = await sim.get(B_PAGE, params={"pref_id": preference["id"]})
    assert "rejected" in page.text and 'value="approve"' in page.text
    retry = await pay_b(sim, preference["id"], "approve")
    assert query_of(retry)["status"] == "approved"


async def test_cancel_comes_back_with_null_status_and_payment(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, receiver: Receiver
) -> None:
    preference = await create_b(sim, b_headers(runtime, sandbox.application_id), reference="payi_c")
    back = await pay_b(sim, preference["id"], "cancel")
    assert back.headers["location"].startswith(RETURN_B + "payi_c?leg=failure&")
    params = query_of(back)
    assert set(params) == PARAMS | {"leg"}
    for name in (
        "status",
        "payment_id",
        "collection_id",
        "collection_status",
        "payment_type",
        "merchant_order_id",
    ):
        assert params[name] == "null"
    assert params["external_reference"] == "payi_c" and params["preference_id"] == preference["id"]
    assert receiver.received == []


async def test_pending_then_settled_by_the_control(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, receiver: Receiver
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    preference = await create_b(sim, headers, reference="payi_p")
    back = await pay_b(sim, preference["id"], "pending")
    assert back.headers["location"].startswith(RETURN_B + "payi_p?leg=pending&")
    payment_id = int(query_of(back)["payment_id"])
    assert query_of(back)["status"] == "pending" and receiver.received == []
    settled = await sim.post(
        "/simulator/controls/settle",
        json={"payment_intent_id": "payi_p", "outcome": "approve"},
        headers=sandbox.headers,
    )
    assert settled.status_code == 200
    assert settled.json() == {
        "payment_intent_id": "payi_p",
        "provider": "provider_b_redirect_get",
        "outcome": "approve",
        "references": [str(payment_id)],
    }
    payment = (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()
    assert payment["status"] == "approved" and payment["date_approved"]
    assert len(receiver.received) == 1
    assert (
        assert_signed(runtime, sandbox.application_id, receiver.received[0], payment_id)["action"]
        == "payment.updated"
    )
    again = await sim.post(
        "/simulator/controls/settle",
        json={"payment_intent_id": "payi_p", "outcome": "reject"},
        headers=sandbox.headers,
    )
    assert again.status_code == 404 and again.json()["error"]["code"] == "RESOURCE_NOT_FOUND"


async def test_settle_reject(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, receiver: Receiver
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    preference = await create_b(sim, headers, reference="payi_pr")
    payment_id = int(query_of(await pay_b(sim, preference["id"], "pending"))["payment_id"])
    settled = await sim.post(
        "/simulator/controls/settle",
        json={
            "payment_intent_id": "payi_pr",
            "outcome": "reject",
            "provider": "provider_b_redirect_get",
        },
        headers=sandbox.headers,
    )
    assert settled.status_code == 200
    assert (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()["status"] == "rejected"
    assert len(receiver.received) == 1


async def test_a_paid_checkout_cannot_be_paid_again(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    preference = await create_b(sim, headers, reference="payi_twice")
    first = query_of(await pay_b(sim, preference["id"], "approve"))
    again = await pay_b(sim, preference["id"], "approve")
    assert again.status_code == 409 and "already paid" in again.text
    assert f'value="{first["payment_id"]}"' in again.text
    assert (await sim.get(B_PAGE, params={"pref_id": preference["id"]})).status_code == 409
    found = (
        await sim.get(f"{B}/v1/payments/search", params={"external_reference": "payi_twice"}, headers=headers)
    ).json()
    assert found["paging"]["total"] == 1


async def test_no_back_urls_shows_a_closing_page(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    preference = await create_b(
        sim, b_headers(runtime, sandbox.application_id), back_urls={}, auto_return=None
    )
    answer = await pay_b(sim, preference["id"], "approve")
    assert answer.status_code == 200 and "close this window" in answer.text


async def test_notifications_only_to_this_service(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, receiver: Receiver
) -> None:
    preference = await create_b(
        sim,
        b_headers(runtime, sandbox.application_id),
        notification_url="http://elsewhere.example/hook",
    )
    await pay_b(sim, preference["id"], "approve")
    assert receiver.received == []  # and nothing was sent off this machine (loopback only)



async def deliver_due(runtime: Runtime, phases: Phases) -> int:
    """The worker's pass over provider B's notifications."""
    return await sender.deliver_due(runtime, phases, {NOTIFIER.provider: NOTIFIER})

@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_failed_notification_is_retried_quickly_then_by_the_worker(
    sim: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    receiver: Receiver,
    clock: FrozenClock,
) -> None:
    receiver.failures_left = 1
    preference = await create_b(sim, b_headers(runtime, sandbox.application_id))
    payment_id = int(query_of(await pay_b(sim, preference["id"], "approve"))["payment_id"])
    assert len(receiver.received) == 2  # one failure, then delivered by a quick retry
    assert_signed(runtime, sandbox.application_id, receiver.received[1], payment_id)

    receiver.failures_left = 3
    preference = await create_b(sim, b_headers(runtime, sandbox.application_id))
    payment_id = int(query_of(await pay_b(sim, preference["id"], "approve"))["payment_id"])

    def hooks() -> list[dict[str, object]]:  # the worker may also send other tests' leftovers
        return [h for h in receiver.received if h["query"] == {"data.id": str(payment_id), "type": "payment"}]

    assert len(hooks()) == 3  # three quick attempts, all refused
    await deliver_due(runtime, Phases(runtime.database))
    assert len(hooks()) == 3  # not due yet
    clock.advance(61)
    await deliver_due(runtime, Phases(runtime.database))
    assert len(hooks()) == 4
    assert_signed(runtime, sandbox.application_id, hooks()[-1], payment_id)
    clock.advance(3600)
    await deliver_due(runtime, Phases(runtime.database))
    assert len(hooks()) == 4  # delivered: never sent again


async def test_two_tabs_pressing_approve_pay_once(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    preference = await create_b(sim, headers, reference="payi_tabs")
    answers = await asyncio.gather(*(pay_b(sim, preference["id"], "approve") for _ in range(4)))
    assert sorted(a.status_code for a in answers) == [303, 409, 409, 409]
    params = {"external_reference": "payi_tabs"}
    found = (await sim.get(f"{B}/v1/payments/search", params=params, headers=headers)).json()
    assert found["paging"]["total"] == 1


async def test_two_workers_send_a_due_notification_once(
    sim: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    receiver: Receiver,
    clock: FrozenClock,
) -> None:
    receiver.failures_left = 3  # the quick attempts all fail: left for the worker
    preference = await create_b(sim, b_headers(runtime, sandbox.application_id))
    payment_id = query_of(await pay_b(sim, preference["id"], "approve"))["payment_id"]
    clock.advance(61)
    phases = Phases(runtime.database)
    await asyncio.gather(
        deliver_due(runtime, phases), deliver_due(runtime, phases), deliver_due(runtime, phases)
    )
    mine = [h for h in receiver.received if h["query"].get("data.id") == payment_id]  # type: ignore[union-attr]
    assert len(mine) == 4  # 3 refused quick attempts + exactly one by the workers
