"""Helpers shared by the tests of this directory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest
from sqlalchemy import func, select

from payorch.client.models import PaymentIntent
from payorch.db.tables.providers import payments
from payorch.providers.provider_b.signature import sign_notification
from payorch.runtime import Runtime
from payorch.simulator.credentials import mock_credentials
from tests.kit import Sandbox
from tests.providers.browser import Browser
from tests.providers.helpers import (
    A,
    B,
    choose_without_returning,
    events_of,
    open_checkout,
    pay,
    query_of,
    read,
    set_fault,
    start,
)


async def connector_id(client: httpx.AsyncClient, sandbox: Sandbox, provider: str) -> str:
    """The sandbox's MOCK connector of ``provider`` (where its notifications are sent)."""
    listed = await client.get(
        f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors", headers=sandbox.headers
    )
    [found] = [c for c in listed.json()["items"] if c["provider"] == provider]
    return str(found["id"])


async def payment_count(runtime: Runtime, intent_id: str) -> int:
    async with runtime.database.transaction() as conn:
        query = select(func.count()).select_from(payments).where(payments.c.payment_intent_id == intent_id)
        return int((await conn.execute(query)).scalar_one())


def authorized_events(events: list[dict]) -> int:  # type: ignore[type-arg]
    return sum(1 for e in events if e["type"] == "payment.authorized")


async def run_until_idle(job: object, runtime: Runtime, rounds: int = 50) -> None:
    for _ in range(rounds):
        if await job.run_once(runtime) == 0:  # type: ignore[attr-defined]
            return
    raise AssertionError("the job never went idle")


async def b_choose_silently(
    client: httpx.AsyncClient, sandbox: Sandbox, body: dict[str, Any], outcome: str
) -> dict[str, str]:
    """The buyer pays at B's page; its notification to us fails (API fault) and the redirect is
    not followed. Answer the genuine return's parameters."""
    await set_fault(client, sandbox, B, "error")
    try:
        location = await choose_without_returning(client, body, outcome)
    finally:
        await set_fault(client, sandbox, B, "ok")
    return query_of(location)


async def control(client: httpx.AsyncClient, sandbox: Sandbox, path: str, **body: Any) -> httpx.Response:
    """A simulator control (docs/simulator.md, "Controls")."""
    return await client.post(f"/simulator/controls/{path}", json=body, headers=sandbox.headers)


async def settled(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, outcome: str, provider: str
) -> None:
    """The settle control at ``provider`` (a dispute opens or ends, a payment moves); asserts 200."""
    answer = await control(
        client, sandbox, "settle", payment_intent_id=intent_id, outcome=outcome, provider=provider
    )
    assert answer.status_code == 200, answer.text


async def _payment(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str) -> dict[str, Any]:
    payment_id = (await read(client, sandbox, intent_id))["payment"]["id"]
    response = await client.get(f"/v1/payments/{payment_id}", headers=sandbox.headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _disputes(events: list[dict[str, Any]]) -> list[tuple[str, str | None, str | None]]:
    return [
        (e["type"], e["data"]["kind"], e["data"].get("outcome"))
        for e in events
        if e["type"].startswith("payment.dispute")
    ]


# The page's button, its test field and value, whether a settle reject follows (a payment left
# processing that then fails).
Choice = tuple[str, str, str, bool]


B_CARD_ERROR: Choice = ("reject", "cardholder_name", "ERRO", False)


C_PROCESSING_ERROR: Choice = ("pending", "card", "4000000000000119", True)


async def by_page(
    client: httpx.AsyncClient, headers: dict[str, str], intent_id: str, body: dict[str, Any], choice: Choice
) -> str:
    """The buyer presses ``choice``'s button with its test value on the simulator page (where it
    is offered); a payment left processing then fails by the settle control. Answers the address
    the provider sends the buyer back to (not followed)."""
    button, field, value, settle = choice
    trip = await open_checkout(client, body)
    assert trip.page is not None and f'<option value="{value}">' in trip.page.response.text
    form = trip.page.form_with_button("outcome", button)
    fields = {**form.fields, "outcome": button, field: value}
    pressed = await client.post(urljoin(trip.page.url, form.action), data=fields)
    assert pressed.status_code == 303, pressed.text
    if settle:
        moved = {"payment_intent_id": intent_id, "outcome": "reject"}
        answer = await client.post(SETTLE, json=moved, headers=headers)
        assert answer.status_code == 200, answer.text
    return str(pressed.headers["location"])


async def market_decline(client: httpx.AsyncClient, sandbox: Sandbox, provider: str) -> str:
    """An intent at ``provider`` whose buyer is declined (the simulated market, or the page's
    test choice a setup named), back at the shop."""
    if provider in BUYER:
        intent, body = await start(client, sandbox, provider, currency="CLP")
        back = await by_page(client, sandbox.headers, intent["id"], body, BUYER[provider])
        await Browser(client).open(back)
        return str(intent["id"])
    answer = await client.post(MARKET, json={"provider": provider, **DECLINE}, headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    intent, _ = await start(client, sandbox, provider, currency="CLP")
    bought = await client.post(
        MARKET + "/buy", json={"payment_intent_id": intent["id"]}, headers=sandbox.headers
    )
    assert bought.status_code == 200, bought.text
    back = bought.json()["return"]
    await Browser(client).open(back["url"], back["method"], back["fields"] or None)
    return str(intent["id"])


async def a_error_page(client: httpx.AsyncClient, sandbox: Sandbox) -> str:
    intent, body = await start(client, sandbox, A, currency="CLP")
    await pay(client, body, "error")
    return str(intent["id"])


Setup = Callable[[pytest.MonkeyPatch], None]


# provider, how it fails, our code, the provider's code.


async def assert_failed_with(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, intent_id: str, provider: str
) -> dict[str, Any]:
    """The intent is FAILED with a reason; payment.failed carries the same; answer the reason."""
    intent = await read(client, sandbox, intent_id)
    assert intent["status"] == "FAILED", intent
    error = intent["last_payment_error"]
    assert set(error) == {"code", "message", "provider", "provider_code", "provider_message", "at"}
    assert error["provider"] == provider and error["message"] and error["provider_message"]
    failed = [e for e in await events_of(runtime, intent_id) if e["type"] == "payment.failed"]
    assert len(failed) == 1 and failed[0]["data"]["last_payment_error"] == error
    as_client_reads = PaymentIntent.model_validate(intent).last_payment_error  # payorch.client
    assert as_client_reads is not None and as_client_reads.code == error["code"]
    assert as_client_reads.provider_code == error["provider_code"]
    return dict(error)


C = "provider_c_redirect_get"


MARKET = "/simulator/controls/market"


SETTLE = "/simulator/controls/settle"


DECLINE = {"approve": 0.0, "decline": 1.0, "give_up": 0.0, "pending": 0.0}


# provider -> the buyer's choice on its page; absent: the simulated market's buyer declines.
BUYER: dict[str, Choice] = {}


def provider_b_card_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provider B's buyer rejects as test cardholder ERRO: "the card could not be processed"."""
    monkeypatch.setitem(BUYER, B, B_CARD_ERROR)


def provider_c_processing_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provider C's buyer pays with test card 0119 left processing; it fails (processing_error)."""
    monkeypatch.setitem(BUYER, C, C_PROCESSING_ERROR)


CASES: list[tuple[str, Setup | None, str, str]] = [
    (A, None, "declined", "-1"),
    (B, None, "declined", "cc_rejected_other_reason"),
    (C, None, "declined", "generic_decline"),
    (B, provider_b_card_error, "provider_error", "cc_rejected_card_error"),
    (C, provider_c_processing_error, "provider_error", "processing_error"),
]


async def b_notify(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    payment_id: str,
    claims: str,
    secret: str | None = None,
) -> httpx.Response:
    """A notification about ``payment_id`` whose body claims ``claims``, signed now with the
    connector's webhook secret (or with ``secret``)."""
    listed = await client.get(
        f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors",
        headers=sandbox.headers,
    )
    connector_id = next(c["id"] for c in listed.json()["items"] if c["provider"] == B)
    if secret is None:
        secret = mock_credentials(runtime.cipher, "provider_b", sandbox.application_id)["webhook_secret"]
    ts = int(runtime.clock.now().timestamp())
    signature = sign_notification(secret, data_id=payment_id, request_id="req-1", ts=ts)
    return await client.post(
        f"/v1/provider-notifications/{B}/{connector_id}",
        params={"data.id": payment_id, "type": "payment"},
        headers={"x-signature": signature, "x-request-id": "req-1"},
        json={"type": "payment", "action": claims, "data": {"id": payment_id, "status": claims}},
    )
