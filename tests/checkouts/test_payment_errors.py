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

from urllib.parse import urljoin

import httpx
import pytest

from payorch.runtime import Runtime
from tests.checkouts.helpers import (
    BUYER,
    C,
    Choice,
    a_error_page,
    assert_failed_with,
    market_decline,
)
from tests.kit import mock_sandbox
from tests.providers.helpers import A, B, events_of, open_checkout, pay, read, start


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
