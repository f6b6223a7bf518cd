"""Shared steps of the provider tests: an intent, a checkout, a buyer at the simulator page."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from payorch.clock import Clock
from payorch.ids import new_id
from payorch.providers.base import (
    CheckoutRef,
    CheckoutRequest,
    CheckoutSession,
    ConnectorContext,
    Credentials,
    Mode,
    ProviderAdapter,
)
from payorch.providers.health import RedisHealth
from payorch.runtime import Runtime
from tests import kit
from tests.kit import Sandbox
from tests.needs import missing
from tests.providers.browser import Browser, Trip

A = "provider_a_redirect_post"
B = "provider_b_redirect_get"
RETURN_URL = "https://shop.example/return?order=1"


async def create_intent(client: httpx.AsyncClient, sandbox: Sandbox, **fields: Any) -> dict[str, Any]:
    """tests/kit.py's create_intent, returning to the shop with ``?order=1``."""
    return await kit.create_intent(client, sandbox, **{"return_url": RETURN_URL, **fields})


async def checkout(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    intent_id: str,
    provider: str | None = None,
    key: str | None = None,
) -> httpx.Response:
    headers = dict(sandbox.headers)
    if key:
        headers["Idempotency-Key"] = key
    body = {} if provider is None else {"provider": provider}
    return await client.post(f"/v1/payment-intents/{intent_id}/checkout", json=body, headers=headers)


async def start(
    client: httpx.AsyncClient, sandbox: Sandbox, provider: str | None = None, **intent: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    created = await create_intent(client, sandbox, **intent)
    response = await checkout(client, sandbox, created["id"], provider)
    assert response.status_code == 200, response.text
    return created, response.json()


async def open_checkout(client: httpx.AsyncClient, checkout_body: dict[str, Any]) -> Trip:
    """The consumer's page sends the buyer to the checkout (form POST for A, redirect for B)."""
    action = checkout_body["checkout"]
    return await Browser(client).open(action["url"], action["method"], action["fields"] or None)


async def pay(client: httpx.AsyncClient, checkout_body: dict[str, Any], outcome: str) -> Trip:
    """Open the checkout and press the outcome button; answer where the buyer ended."""
    trip = await open_checkout(client, checkout_body)
    assert trip.page is not None, trip
    assert trip.page.response.status_code == 200, trip.page.response.text
    return await Browser(client).press(trip.page, "outcome", outcome)


async def read(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str) -> dict[str, Any]:
    response = await client.get(f"/v1/payment-intents/{intent_id}", headers=sandbox.headers)
    assert response.status_code == 200, response.text
    return response.json()


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


async def events_of(runtime: Runtime, intent_id: str) -> list[dict[str, Any]]:
    """The intent's events as webhook bodies, in order (read from the outbox table)."""
    import json

    from sqlalchemy import select

    from payorch.db.tables import events

    async with runtime.database.transaction() as conn:
        rows = await conn.execute(
            select(events.c.payload).where(events.c.payment_intent_id == intent_id).order_by(events.c.seq)
        )
        return [json.loads(row.payload) for row in rows]


async def set_fault(client: httpx.AsyncClient, sandbox: Sandbox, provider: str, mode: str) -> None:
    """Simulator control (docs/simulator.md): the provider API answers this application with faults."""
    response = await client.post(
        "/simulator/controls/faults",
        json={"provider": provider, "mode": mode},
        headers=sandbox.headers,
    )
    assert response.status_code in (200, 201, 204), response.text


async def press_without_returning(
    client: httpx.AsyncClient, checkout_body: dict[str, Any], outcome: str
) -> httpx.Response:
    """The buyer presses an outcome at the simulator page; answer the page's response (a 303, or
    provider A's auto-posting cancel form) without following it."""
    from urllib.parse import urljoin

    trip = await open_checkout(client, checkout_body)
    assert trip.page is not None
    form = trip.page.form_with_button("outcome", outcome)
    return await client.post(urljoin(trip.page.url, form.action), data={**form.fields, "outcome": outcome})


async def choose_without_returning(
    client: httpx.AsyncClient, checkout_body: dict[str, Any], outcome: str
) -> str:
    """The buyer presses an outcome at the simulator page; answer the return address the
    provider sends them to, without following it (the test decides when the return arrives)."""
    response = await press_without_returning(client, checkout_body, outcome)
    assert response.status_code == 303, response.text
    return response.headers["location"]


REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_prefix() -> str:
    return f"payorch-test-{secrets.token_hex(6)}:"


async def redis_health(clock: Clock, threshold: int, skip_seconds: float, prefix: str) -> RedisHealth:
    """A provider-health store on the local Redis under ``prefix``; without Redis the test is
    skipped (a failure with CI set: tests/needs.py)."""
    # A generous timeout: these tests are about shared health, not an outage (tests/ratelimit's
    # outage tests pause their own Redis), and a busy machine can stall a reply past 50 ms.
    store = RedisHealth.from_url(
        REDIS_URL, clock, threshold, skip_seconds, prefix=prefix, timeout_seconds=2.0
    )
    try:
        await store._redis.ping()
    except Exception as exc:  # noqa: BLE001
        await store.aclose()
        missing(f"Redis is unreachable ({exc})")
    return store


async def forget_redis_keys(store: RedisHealth, prefix: str) -> None:
    keys = [k async for k in store._redis.scan_iter(match=prefix + "*")]
    if keys:
        await store._redis.delete(*keys)


async def simulated_a_status(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, token: str
) -> httpx.Response:
    """Provider A's ``status`` of ``token`` read straight from the simulator, as the sandbox's
    MOCK connector would."""
    from payorch.simulator.credentials import mock_credentials

    credentials = mock_credentials(runtime.cipher, "provider_a", sandbox.application_id)
    headers = {
        "Tbk-Api-Key-Id": credentials["commerce_code"],
        "Tbk-Api-Key-Secret": credentials["api_key"],
    }
    return await client.get(
        f"/simulator/provider_a/rswebpaytransaction/api/webpay/v1.2/transactions/{token}",
        headers=headers,
    )


# -- the adapter tests (test_adapter_a/b/c.py) ------------------------------------------------------


def connector_context(
    provider: str,
    *,
    mode: Mode,
    base_url: str,
    credentials: dict[str, str],
    http: httpx.AsyncClient,
    clock: Clock,
    application_id: str = "app_test",
    timeout_seconds: float = 0.2,
) -> ConnectorContext:
    """A connector ``cfg_test`` of ``provider`` built by hand (a fake provider's, or the
    simulator's with MOCK credentials)."""
    return ConnectorContext(
        connector_id="cfg_test",
        application_id=application_id,
        provider=provider,
        mode=mode,
        base_url=base_url,
        credentials=Credentials(credentials),
        http=http,
        clock=clock,
        timeout_seconds=timeout_seconds,
    )


async def mock_connector(runtime: Runtime, provider: str) -> tuple[ConnectorContext, Sandbox]:
    """A new sandbox application and a MOCK connector of ``provider`` for it (the simulator,
    in-process through runtime.http), built as the service builds one."""
    sandbox = await kit.new_application(runtime)
    ctx = runtime.connector_contexts.build(
        connector_id=new_id("cfg"),
        application_id=sandbox.application_id,
        provider=provider,
        mode=Mode.MOCK,
        credentials=None,
    )
    return ctx, sandbox


async def start_session(
    adapter: ProviderAdapter,
    ctx: ConnectorContext,
    *,
    amount: int = 1500,
    currency: str = "CLP",
    intent: str | None = None,
    description: str = "Order",
    notification_url: str | None = None,
) -> tuple[CheckoutRef, CheckoutSession]:
    """``adapter.create_checkout`` for a new intent (returning to our checkout-return route),
    and the reference the service keeps of the session."""
    intent = intent or new_id("payi")
    checkout_id = new_id("chk")
    session = await adapter.create_checkout(
        ctx,
        CheckoutRequest(
            payment_intent_id=intent,
            checkout_id=checkout_id,
            amount=amount,
            currency=currency,
            description=description,
            return_url=f"http://testserver/v1/checkout-returns/{ctx.provider}/{intent}",
            notification_url=notification_url,
            expires_at=ctx.clock.now() + timedelta(minutes=10),
        ),
    )
    ref = CheckoutRef(
        payment_intent_id=intent,
        checkout_id=checkout_id,
        provider_reference=session.provider_reference,
        amount=amount,
        currency=currency,
        provider_data=session.provider_data,
    )
    return ref, session
