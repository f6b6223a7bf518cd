"""Why a payment failed (docs/api.md, "Why a payment failed"), through HTTP on SQLite and
PostgreSQL: a decline and a provider error at each provider give the intent a
``last_payment_error`` mapped from the provider's own answer, the same in payment.failed.

The simulated market declines with a generic code (A: response_code -1, B:
cc_rejected_other_reason, C: generic_decline). A shows its error page on request. For B's and C's
provider errors the buyer picks the simulator page's test choice, as in the real sandboxes
(docs/simulator.md): B's test cardholder name ERRO (status_detail cc_rejected_card_error), C's test
card 4000 0000 0000 0119 (processing_error) on a payment left processing that then fails. CASES
run through the API, the events, the client's model and the intent page in
tests/dashboard/test_intent_reasons.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest

from payorch.client.models import PaymentIntent
from payorch.runtime import Runtime
from tests.conftest import Sandbox
from tests.providers.browser import Browser
from tests.providers.helpers import A, B, events_of, mock_sandbox, open_checkout, pay, read, start

C = "provider_c_redirect_get"
MARKET = "/simulator/controls/market"
SETTLE = "/simulator/controls/settle"
DECLINE = {"approve": 0.0, "decline": 1.0, "give_up": 0.0, "pending": 0.0}
# The page's button, its test field and value, whether a settle reject follows (a payment left
# processing that then fails).
Choice = tuple[str, str, str, bool]
B_CARD_ERROR: Choice = ("reject", "cardholder_name", "ERRO", False)
C_PROCESSING_ERROR: Choice = ("pending", "card", "4000000000000119", True)
# provider -> the buyer's choice on its page; absent: the simulated market's buyer declines.
BUYER: dict[str, Choice] = {}


def provider_b_card_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provider B's buyer rejects as test cardholder ERRO: "the card could not be processed"."""
    monkeypatch.setitem(BUYER, B, B_CARD_ERROR)


def provider_c_processing_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provider C's buyer pays with test card 0119 left processing; it fails (processing_error)."""
    monkeypatch.setitem(BUYER, C, C_PROCESSING_ERROR)


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
CASES: list[tuple[str, Setup | None, str, str]] = [
    (A, None, "declined", "-1"),
    (B, None, "declined", "cc_rejected_other_reason"),
    (C, None, "declined", "generic_decline"),
    (B, provider_b_card_error, "provider_error", "cc_rejected_card_error"),
    (C, provider_c_processing_error, "provider_error", "processing_error"),
]


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


async def test_provider_a_error_page_is_a_provider_error(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent_id = await a_error_page(client, sandbox)
    error = await assert_failed_with(client, runtime, sandbox, intent_id, A)
    assert error["code"] == "provider_error" and error["provider_code"] == "FAILED/-1"


async def test_a_buyer_who_gives_up_is_cancelled_by_the_buyer(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A, currency="CLP")
    await pay(client, body, "cancel")
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "CANCELLED"
    assert read_back["last_payment_error"]["code"] == "cancelled_by_buyer"
    cancelled = (await events_of(runtime, intent["id"]))[-1]
    assert cancelled["type"] == "payment.cancelled"
    assert cancelled["data"]["last_payment_error"] == read_back["last_payment_error"]


async def test_an_authorized_or_new_intent_has_no_payment_error(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A, currency="CLP")
    assert "last_payment_error" not in await read(client, sandbox, intent["id"])
    await pay(client, body, "approve")
    assert "last_payment_error" not in await read(client, sandbox, intent["id"])


@pytest.mark.parametrize(
    ("provider", "choice", "code", "provider_code"),
    [
        (
            B,
            ("reject", "cardholder_name", "FUND", False),
            "insufficient_funds",
            "cc_rejected_insufficient_amount",
        ),
        (B, ("reject", "cardholder_name", "BLAC", False), "fraud_suspected", "cc_rejected_blacklist"),
        (C, ("pending", "card", "4000000000009995", True), "insufficient_funds", "insufficient_funds"),
        (C, ("pending", "card", "4100000000000019", True), "fraud_suspected", "fraudulent"),
    ],
)
async def test_the_pages_other_test_choices(
    client: httpx.AsyncClient,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    choice: Choice,
    code: str,
    provider_code: str,
) -> None:
    sandbox = await mock_sandbox(runtime)
    monkeypatch.setitem(BUYER, provider, choice)
    intent_id = await market_decline(client, sandbox, provider)
    error = await assert_failed_with(client, runtime, sandbox, intent_id, provider)
    assert (error["code"], error["provider_code"]) == (code, provider_code)


async def test_provider_c_page_says_a_processing_error_and_stays_open(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, C, currency="CLP")
    trip = await open_checkout(client, body)
    assert trip.page is not None
    form = trip.page.form_with_button("outcome", "reject")
    fields = {**form.fields, "outcome": "reject", "card": "4000000000000119"}
    again = await client.post(urljoin(trip.page.url, form.action), data=fields)
    assert again.status_code == 200 and "An error occurred while processing your card." in again.text
    assert (await read(client, sandbox, intent["id"]))["status"] not in ("FAILED", "CANCELLED")
