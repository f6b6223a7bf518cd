"""The test kit: the set-ups tests share, written once.

Import from here rather than from ``tests.conftest`` or another test module (no test module
imports another). What is here:

- settings: ``make_settings`` (the test defaults), ``TEST_SECRET_KEY``; a module changes its
  app's settings with ``pytestmark = pytest.mark.settings(name=value, ...)``, read by
  conftest's ``settings_overrides`` (a module whose overrides need another fixture still
  overrides that fixture);
- an application: ``new_application`` (a ``Sandbox``: ids and API key), ``mock_sandbox`` (with
  a MOCK connector for each registered provider, at its ``mock_priority``);
- an intent: ``intent_body``, ``create_intent`` (through ``POST /v1/payment-intents``);
- a paid intent: ``authorized_payment`` (an AUTHORIZED intent and its payment written through
  the repositories, as a checkout return writes them);
- a webhook endpoint: ``create_endpoint`` (through the admin API; pair it with a receiver from
  tests/webhooks/receiver.py);
- the error shape: ``assert_error``;
- an API of its own built from settings alone, as ``payorch serve`` builds it (its own Database,
  bounded, with its replica): ``served`` (a ``Served``: client, runtime, sandbox);
- the providers a test covers: ``PROVIDER_IDS`` (payorch.providers.registry), or, for a test
  written for some of them, ``chosen_providers`` (the others left out with a reason); a table
  written per provider is checked with ``each_provider_has_cases``;
- a loopback port nothing listens on: ``refused_address`` (no test dials a port it did not open:
  ``make run`` on 8000, or any other service, must not change a result).
"""

from __future__ import annotations

import random
import socket
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from payorch.app import create_app
from payorch.applications.service import create_application
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.connectors.service import add_mock_connectors
from payorch.ids import new_id
from payorch.intents import repository as intents
from payorch.intents.records import PaymentIntent
from payorch.payments import repository as payments
from payorch.payments.records import Payment
from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.registry import PROVIDER_IDS
from payorch.runtime import Runtime

TEST_SECRET_KEY = "test-secret-key-0123456789abcdef0123456789"
RETURN_URL = "https://shop.example/return"
INTENTS = "/v1/payment-intents"
ENDPOINTS = "/v1/admin/webhook-endpoints"


def marked_settings(request: pytest.FixtureRequest) -> dict[str, object]:
    """The values of the closest ``pytest.mark.settings(...)`` on a test or its module."""
    marker = request.node.get_closest_marker("settings")
    return dict(marker.kwargs) if marker is not None else {}


def make_settings(database_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "database_url": database_url,
        "secret_key": TEST_SECRET_KEY,
        "public_url": "http://testserver",
        # Webhook tests deliver to receivers on loopback: allowed explicitly, on both databases
        # (its default is off for PostgreSQL); tests of the setting override it.
        "sandbox_webhooks_allow_private": True,
        # Tests sharing the machine's Redis test sharing, not an outage: a busy machine can stall
        # a reply past the 50 ms default and open the circuit. Outage tests set their own.
        "redis_timeout_seconds": 1.0,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@dataclass
class Sandbox:
    application_id: str
    merchant_account_id: str
    api_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}


async def new_application(runtime: Runtime, environment: str = "SANDBOX") -> Sandbox:
    async with runtime.database.transaction() as conn:
        created = await create_application(
            conn, runtime.clock, name="test", environment=environment, merchant_name="shop"
        )
    return Sandbox(created.application_id, created.merchant_account_id, created.api_key)


async def mock_sandbox(runtime: Runtime) -> Sandbox:
    """A sandbox application whose merchant has a MOCK connector for each registered provider."""
    sandbox = await new_application(runtime)
    async with runtime.database.transaction() as conn:
        await add_mock_connectors(
            conn,
            runtime.clock,
            application_id=sandbox.application_id,
            merchant_account_id=sandbox.merchant_account_id,
        )
    return sandbox


def intent_body(app: Sandbox, **overrides: Any) -> dict[str, Any]:
    """A valid create body for ``app``'s merchant; ``overrides`` replace or add fields."""
    return {
        "merchant_account_id": app.merchant_account_id,
        "external_reference": "order-1",
        "amount": 1500,
        "currency": "CLP",
        "return_url": RETURN_URL,
        **overrides,
    }


async def create_intent(
    client: httpx.AsyncClient,
    app: Sandbox,
    *,
    key: str | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """``POST /v1/payment-intents`` (with ``Idempotency-Key: key`` when given); asserts 201."""
    headers = dict(app.headers)
    if key is not None:
        headers["Idempotency-Key"] = key
    response = await client.post(INTENTS, json=intent_body(app, **overrides), headers=headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


@dataclass
class Paid:
    payment_id: str
    intent_id: str
    amount: int


async def authorized_payment(
    runtime: Runtime,
    app: Sandbox,
    *,
    amount: int = 1000,
    currency: str = "CLP",
    provider: str = PROVIDER_A,
    at_ms: int | None = None,
    status: str = "AUTHORIZED",
    external_reference: str | None = None,
) -> Paid:
    """An intent AUTHORIZED with its payment, in one transaction, like the return handler."""
    now = runtime.clock.now()
    # No at_ms: the clock's, so payments made one after another sort in the order made (ids.py).
    intent_id = new_id("payi", at_ms)
    payment_id = new_id("pay", at_ms)
    reference = external_reference if external_reference is not None else f"order-{intent_id[-6:]}"
    async with runtime.database.transaction() as conn:
        await intents.insert_intent(
            conn,
            PaymentIntent(
                id=intent_id,
                application_id=app.application_id,
                merchant_account_id=app.merchant_account_id,
                status=status,
                external_reference=reference,
                amount=amount,
                currency=currency,
                description=None,
                requested_provider="auto",
                provider=provider,
                return_url=RETURN_URL,
                metadata={},
                created_at=now,
                updated_at=now,
            ),
        )
        await payments.insert_payment(
            conn,
            Payment(
                id=payment_id,
                application_id=app.application_id,
                payment_intent_id=intent_id,
                merchant_account_id=app.merchant_account_id,
                external_reference=reference,
                status=status,
                amount=amount,
                refunded_amount=0,
                currency=currency,
                provider=provider,
                provider_reference="tok-" + intent_id[-10:],
                authorization_code="1213",
                authorized_at=now,
                created_at=now,
                amount_captured=amount,
                captured_at=now,
            ),
        )
    return Paid(payment_id, intent_id, amount)


@dataclass
class Endpoint:
    id: str
    secret: str


async def create_endpoint(
    client: httpx.AsyncClient, app: Sandbox, url: str, events: list[str] | None = None
) -> Endpoint:
    """``POST /v1/admin/webhook-endpoints``; asserts 201 and keeps the secret shown once."""
    body: dict[str, Any] = {"url": url}
    if events is not None:
        body["events"] = events
    response = await client.post(ENDPOINTS, json=body, headers=app.headers)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    return Endpoint(data["id"], data["secret"])


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """One answer in the API's error shape with ``status`` and ``code``; returns the error."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert set(error) == {"code", "message", "request_id", "details"}
    assert error["code"] == code
    assert error["message"]
    assert isinstance(error["details"], dict)
    assert response.headers["x-request-id"] == error["request_id"]
    return error


@contextmanager
def refused_address(port: int = 0) -> Iterator[str]:
    """``host:port`` on a random 127.x.y.z that this test holds without listening: a connection
    to it is refused, and no other process (``make run``, another test) can take it while the
    test runs. ``port``: a fixed one (webhook URLs of a sandbox allow only a few), else any."""
    for _ in range(50):
        host = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"  # noqa: S311
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
            yield f"{host}:{sock.getsockname()[1]}"
            return
    raise RuntimeError("no free loopback address")


@dataclass(frozen=True, slots=True)
class Served:
    client: httpx.AsyncClient
    runtime: Runtime
    app: Sandbox


@asynccontextmanager
async def served(settings: Settings) -> AsyncIterator[Served]:
    """The API built from ``settings`` alone, with a sandbox application; closed at the end."""
    runtime = build_runtime(settings)  # builds (and owns) its Database from the settings
    try:
        transport = httpx.ASGITransport(app=create_app(runtime=runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Served(client, runtime, await new_application(runtime))
    finally:
        await runtime.close()


def each_provider_has_cases(named: set[str], where: str) -> None:
    """A table of cases written per provider (its own test cards, codes, pages) names every
    registered provider: one added to the registry fails here until it has its cases."""
    missing = [provider for provider in PROVIDER_IDS if provider not in named]
    assert not missing, f"{where} has no case for {missing}: write the new provider's cases there"
    unknown = sorted(named - set(PROVIDER_IDS))
    assert not unknown, f"{where} names providers the registry does not have: {unknown}"


def chosen_providers(*covered: str, left_out: Mapping[str, str]) -> list[str]:
    """The providers a test written for some of them runs with: ``covered``, in that order, and
    every other registered provider in ``left_out`` with the reason (where it is covered instead,
    or why it cannot be). A provider added to the registry fails here, at collection, until the
    test covers it or says why not (tests/test_architecture.py refuses lists written by hand)."""
    each_provider_has_cases({*covered, *left_out}, f"chosen_providers{covered}")
    both = set(covered) & set(left_out)
    assert not both, f"{sorted(both)} both covered and left out"
    assert all(reason.strip() for reason in left_out.values()), "say why each is left out"
    return list(covered)
