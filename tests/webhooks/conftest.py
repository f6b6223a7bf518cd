"""Fixtures of the webhook tests: a local receiver and a delivery job driven by the test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import delete

from payorch.clock import FrozenClock
from payorch.db.tables.webhooks import webhook_endpoints
from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests.databases import own_database
from tests.kit import Sandbox, marked_settings
from tests.webhooks.helpers import CREATED, FakeDns, Hooks
from tests.webhooks.receiver import Receiver, serve_receiver

database_url = own_database  # the delivery job sweeps the database: this module gets its own


@pytest.fixture
def dns() -> FakeDns:
    return FakeDns()


@pytest.fixture
def webhook_resolver(request: pytest.FixtureRequest) -> FakeDns | None:
    """The runtime is built with the fake DNS for the tests that ask for ``dns``."""
    if "dns" in request.fixturenames:
        fake: FakeDns = request.getfixturevalue("dns")
        return fake
    return None


@pytest.fixture(autouse=True)
async def forget_endpoints(runtime: Runtime) -> AsyncIterator[None]:
    """Delete the endpoints this test created (their deliveries go with them), so a later test
    of the module never has its worker attempt this test's deliveries."""
    yield
    if CREATED:
        async with runtime.database.transaction() as conn:
            await conn.execute(delete(webhook_endpoints).where(webhook_endpoints.c.id.in_(CREATED)))
        CREATED.clear()


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, object]:
    """``pytest.mark.settings(...)`` as everywhere (tests/conftest.py), and on top of it what an
    indirect parametrization chose (helpers.PRIVATE_ON / PRIVATE_OFF)."""
    return {**marked_settings(request), **getattr(request, "param", {})}


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as server:
        yield server


@pytest.fixture
async def deliveries(runtime: Runtime) -> AsyncIterator[WebhookDeliveries]:
    job = WebhookDeliveries()
    yield job
    await job.drain()


@pytest.fixture
def hooks(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    clock: FrozenClock,
    receiver: Receiver,
    deliveries: WebhookDeliveries,
) -> Hooks:
    """The usual set-up of a delivery test in one: unpack it with ``hooks.parts()``."""
    return Hooks(client, sandbox, runtime, clock, receiver, deliveries)
