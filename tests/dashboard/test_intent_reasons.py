"""The intent page says why (docs/api.md, "Why a payment failed"): a decline and a provider error at each provider
(A, B, C) show payorch's reason, the provider's own code and words, and the next step a person
can take; PROCESSING says what it waits for and until when. Through HTTP, SQLite and PostgreSQL
(the same failures as tests/checkouts/test_payment_errors.py)."""

from __future__ import annotations

import html

import httpx
import pytest

from payorch.client.models import PaymentIntent
from payorch.providers.payment_errors import MESSAGES, PaymentErrorCode
from payorch.runtime import Runtime
from tests.checkouts.helpers import CASES, Setup, a_error_page, assert_failed_with, market_decline
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, mock_sandbox
from tests.providers.browser import Browser
from tests.providers.helpers import A, B, events_of, pay, read, start

MARKET = "/simulator/controls/market"
PENDING = {"approve": 0.0, "decline": 0.0, "give_up": 0.0, "pending": 1.0}


async def page_text(client: httpx.AsyncClient, intent_id: str) -> str:
    page = await client.get(f"/dashboard/payments/{intent_id}")
    assert page.status_code == 200, page.text
    return html.unescape(page.text)


def assert_says_why(text: str, code: str, provider: str, provider_code: str) -> None:
    assert "The payment failed; nothing was charged." in text
    assert f"{MESSAGES[PaymentErrorCode(code)].rstrip('.')} (code {code})." in text
    assert f"{provider} answered {provider_code}: " in text
    assert "Next step:" in text
    assert "No payment: the provider has not authorized this intent." not in text


@pytest.mark.parametrize(("provider", "setup", "code", "provider_code"), CASES)
async def test_a_failed_intent_says_why_and_what_to_do(
    client: httpx.AsyncClient,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    setup: Setup | None,
    code: str,
    provider_code: str,
) -> None:
    sandbox = await mock_sandbox(runtime)
    if setup is not None:
        setup(monkeypatch)
    intent_id = await market_decline(client, sandbox, provider)
    error = await assert_failed_with(client, runtime, sandbox, intent_id, provider)  # API, events
    assert (error["code"], error["provider_code"]) == (code, provider_code)
    await sign_in(client, sandbox)
    text = await page_text(client, intent_id)
    assert_says_why(text, code, provider, provider_code)
    if code == "provider_error":
        assert "The provider failed, not the buyer" in text
    else:
        assert "Ask the buyer to pay with another card or method" in text


async def test_provider_a_error_page(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent_id = await a_error_page(client, sandbox)
    await sign_in(client, sandbox)
    text = await page_text(client, intent_id)
    assert_says_why(text, "provider_error", A, "FAILED/-1")
    assert "answered FAILED/-1: The payment form ended on the provider's error page." in text


async def page_after(client: httpx.AsyncClient, runtime: Runtime, button: str) -> str:
    """The intent page once the buyer pressed ``button`` on provider A's page."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A, currency="CLP")
    await pay(client, body, button)
    await sign_in(client, sandbox)
    return await page_text(client, intent["id"])


async def test_cancelled_says_cancelled(client: httpx.AsyncClient, runtime: Runtime) -> None:
    text = await page_after(client, runtime, "cancel")
    assert "Cancelled; nothing was charged." in text and "(code cancelled_by_buyer)" in text
    assert "The payment failed" not in text


async def processing_intent(client: httpx.AsyncClient, sandbox: Sandbox) -> str:
    answer = await client.post(MARKET, json={"provider": B, **PENDING}, headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    intent, _ = await start(client, sandbox, B, currency="CLP")
    bought = await client.post(
        MARKET + "/buy", json={"payment_intent_id": intent["id"]}, headers=sandbox.headers
    )
    back = bought.json()["return"]
    await Browser(client).open(back["url"], back["method"], back["fields"] or None)
    return str(intent["id"])


async def test_processing_says_what_it_waits_for_and_until_when(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent_id = await processing_intent(client, sandbox)
    read_back = await read(client, sandbox, intent_id)
    assert read_back["status"] == "PROCESSING" and "last_payment_error" not in read_back
    waiting = read_back["processing"]
    assert waiting["waiting_for"] == "provider_confirmation" and waiting["provider"] == B
    assert waiting["next_check_at"] > read_back["created_at"]
    assert waiting["last_check_at"] is None  # B answers about a payment at any time
    assert PaymentIntent.model_validate(read_back).processing is not None  # payorch.client
    processing = [e for e in await events_of(runtime, intent_id) if e["type"] == "payment.processing"]
    assert processing[0]["data"]["reason"] == "pending (pending_waiting_payment)"
    await sign_in(client, sandbox)
    text = await page_text(client, intent_id)
    assert "Processing: waiting for the provider." in text
    assert f"Waiting for {B} to confirm or refuse the payment: pending (pending_waiting_payment)." in text
    assert f"payorch asks {B} again at " in text and "until it answers" in text
    assert "do not ship the order until it is AUTHORIZED" in text
    assert "payorch keeps asking until it decides" in text  # B answers about a payment at any time


async def test_authorized_shows_its_payment_only(client: httpx.AsyncClient, runtime: Runtime) -> None:
    text = await page_after(client, runtime, "approve")
    assert 'id="outcome"' not in text and "Next step" not in text
