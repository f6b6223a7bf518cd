"""POST /v1/payment-intents/{id}/cancel through HTTP on SQLite and PostgreSQL: the provider's
checkout is stopped first, and a buyer who already paid wins."""

from __future__ import annotations

import httpx
import pytest

from payorch.providers.base import CheckoutRef, ConnectorContext, PaymentResult, ProviderRejected
from payorch.providers.registry import get_adapter
from payorch.runtime import Runtime
from tests.checkouts.cancel_helpers import a_committed, b_statuses, cancel, try_to_pay
from tests.checkouts.helpers import payment_count
from tests.kit import mock_sandbox, new_application
from tests.providers.helpers import (
    A,
    B,
    checkout,
    choose_without_returning,
    create_intent,
    events_of,
    pay,
    read,
    set_fault,
    start,
)

ALLOWED = "Allowed only while the status is CREATED or REQUIRES_ACTION."
ALLOWED_STATUSES = ["CREATED", "REQUIRES_ACTION"]


def cancelled_reasons(events: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [e["data"]["reason"] for e in events if e["type"] == "payment.cancelled"]


async def test_cancel_a_created_intent(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    response = await cancel(client, sandbox, intent["id"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["id"] == intent["id"] and body["status"] == "CANCELLED"
    assert "payment" not in body
    assert [t["type"] for t in body["timeline"]] == ["payment_intent.created", "payment.cancelled"]
    assert cancelled_reasons(await events_of(runtime, intent["id"])) == ["merchant"]
    # Final: no second cancel, no checkout.
    again = await cancel(client, sandbox, intent["id"])
    assert again.status_code == 409
    error = again.json()["error"]
    assert error["code"] == "INVALID_STATE" and error["details"] == {
        "status": "CANCELLED",
        "allowed_statuses": ALLOWED_STATUSES,
    }
    assert error["message"].endswith(ALLOWED), error["message"]
    assert (await checkout(client, sandbox, intent["id"])).status_code == 409
    # A reason of one's own; an empty one or an unknown field is refused and changes nothing.
    other = await create_intent(client, sandbox)
    for bad in ({"reason": ""}, {"why": "x"}, {"reason": 3}):
        refused = await cancel(client, sandbox, other["id"], bad)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "VALIDATION_ERROR"
    assert (await read(client, sandbox, other["id"]))["status"] == "CREATED"
    given = await cancel(client, sandbox, other["id"], {"reason": "out of stock"})
    assert given.status_code == 200, given.text
    assert cancelled_reasons(await events_of(runtime, other["id"])) == ["out of stock"]


async def test_cancel_at_provider_a_then_the_page_cannot_pay(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A)
    response = await cancel(client, sandbox, intent["id"])
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "CANCELLED"
    # The buyer still has the page open and approves: the return never commits the token.
    trip = await pay(client, body, "approve")
    assert trip.left_to is not None, trip
    token = body["checkout"]["fields"]["token_ws"]
    assert not await a_committed(runtime, token)
    # Nor does an abort, or a return replayed later.
    second = await start(client, sandbox, A)
    assert (await cancel(client, sandbox, second[0]["id"])).status_code == 200
    await pay(client, second[1], "cancel")
    for done in (intent, second[0]):
        read_back = await read(client, sandbox, done["id"])
        assert read_back["status"] == "CANCELLED" and "payment" not in read_back
        assert await payment_count(runtime, done["id"]) == 0
    types = [t["type"] for t in (await read(client, sandbox, intent["id"]))["timeline"]]
    assert types == ["payment_intent.created", "payment.checkout.started", "payment.cancelled"]


async def test_cancel_at_provider_b_expires_the_preference(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    response = await cancel(client, sandbox, intent["id"])
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "CANCELLED"
    # The old page no longer takes a payment.
    await try_to_pay(client, body)
    assert "approved" not in await b_statuses(client, runtime, sandbox, intent["id"])
    assert (await read(client, sandbox, intent["id"]))["status"] == "CANCELLED"
    assert await payment_count(runtime, intent["id"]) == 0


async def test_cancel_after_authorization_is_refused(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A)
    await pay(client, body, "approve")
    response = await cancel(client, sandbox, intent["id"], key="cancel-late")
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_STATE" and error["details"] == {
        "status": "AUTHORIZED",
        "allowed_statuses": ALLOWED_STATUSES,
    }
    assert error["message"] == f"A AUTHORIZED payment intent cannot be cancelled. {ALLOWED}"
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    assert cancelled_reasons(await events_of(runtime, intent["id"])) == []


async def test_the_buyer_paid_but_never_returned(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """The provider wins: the intent takes its outcome as a return would, and the cancel says so.
    (Provider B notifies an approval at once, so its payment left pending stands for "is paying".)"""
    sandbox = await mock_sandbox(runtime)
    for provider, outcome, status in ((A, "approve", "AUTHORIZED"), (B, "pending", "PROCESSING")):
        intent, body = await start(client, sandbox, provider)
        await choose_without_returning(client, body, outcome)
        assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
        response = await cancel(client, sandbox, intent["id"])
        assert response.status_code == 409, response.text
        error = response.json()["error"]
        assert error["code"] == "INVALID_STATE" and error["details"] == {
            "status": status,
            "allowed_statuses": ALLOWED_STATUSES,
        }
        assert status in error["message"] and "already paid or is paying" in error["message"]
        read_back = await read(client, sandbox, intent["id"])
        assert read_back["status"] == status, provider
        events = await events_of(runtime, intent["id"])
        assert cancelled_reasons(events) == []
        if status == "AUTHORIZED":
            assert read_back["payment"]["id"].startswith("pay_")
            assert await payment_count(runtime, intent["id"]) == 1
            assert [e["type"] for e in events].count("payment.authorized") == 1
        else:
            assert await payment_count(runtime, intent["id"]) == 0
            refused = await cancel(client, sandbox, intent["id"])
            assert (
                refused.json()["error"]["message"]
                == f"A PROCESSING payment intent cannot be cancelled. {ALLOWED}"
            )


async def test_provider_unavailable_changes_nothing_and_the_key_retries(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A)
    await set_fault(client, sandbox, A, "error")
    response = await cancel(client, sandbox, intent["id"], key="cancel-1")
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == "CONNECTOR_UNAVAILABLE" and "Retry-After" in response.headers
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "REQUIRES_ACTION"
    assert cancelled_reasons(await events_of(runtime, intent["id"])) == []
    await set_fault(client, sandbox, A, "ok")
    retried = await cancel(client, sandbox, intent["id"], key="cancel-1")
    assert retried.status_code == 200, retried.text
    assert retried.json()["status"] == "CANCELLED"
    assert "Idempotent-Replayed" not in retried.headers
    # The same key again is a replay of the same answer; a different body with it is refused.
    replay = await cancel(client, sandbox, intent["id"], key="cancel-1")
    assert replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == retried.json()
    conflict = await cancel(client, sandbox, intent["id"], {"reason": "other"}, key="cancel-1")
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "IDEMPOTENCY_CONFLICT"
    assert cancelled_reasons(await events_of(runtime, intent["id"])) == ["merchant"]
    # The page was stopped too: an approval there now moves nothing.
    await pay(client, body, "approve")
    assert (await read(client, sandbox, intent["id"]))["status"] == "CANCELLED"
    assert not await a_committed(runtime, body["checkout"]["fields"]["token_ws"])


async def test_another_applications_intent_is_not_found(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    stranger = await new_application(runtime)
    response = await cancel(client, stranger, intent["id"])
    assert response.status_code == 404, response.text
    assert response.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    assert (await cancel(client, sandbox, "payi_unknown")).status_code == 404
    assert (await read(client, sandbox, intent["id"]))["status"] == "CREATED"
    unauthenticated = await client.post(f"/v1/payment-intents/{intent['id']}/cancel", json={})
    assert unauthenticated.status_code == 401


async def test_the_provider_refusing_to_stop_the_checkout_is_a_502_that_changes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    adapter = get_adapter(B)
    refusals: list[str] = []

    async def refuse(_ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        # A definite refusal of the provider (a 4xx it means), not an outage.
        refusals.append(checkout.checkout_id)
        raise ProviderRejected("preference cannot be expired", provider=B)

    monkeypatch.setattr(adapter, "cancel_checkout", refuse)
    response = await cancel(client, sandbox, intent["id"], key="cancel-refused")
    assert response.status_code == 502, response.text
    assert response.json()["error"]["code"] == "PROVIDER_ERROR"
    assert "refused to stop the checkout" in response.json()["error"]["message"]
    assert len(refusals) == 1
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    assert cancelled_reasons(await events_of(runtime, intent["id"])) == []
    # The lease was freed and the key not spent on the refusal: the same key cancels once the
    # provider stops the checkout, and the page no longer takes a payment.
    monkeypatch.undo()
    retried = await cancel(client, sandbox, intent["id"], key="cancel-refused")
    assert retried.status_code == 200, retried.text
    assert retried.json()["status"] == "CANCELLED"
    await try_to_pay(client, body)
    assert "approved" not in await b_statuses(client, runtime, sandbox, intent["id"])
