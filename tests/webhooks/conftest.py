"""Fixtures of the webhook tests: a local receiver and a delivery job driven by the test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import delete, update

from payorch.db.tables.webhooks import webhook_deliveries, webhook_endpoints
from payorch.runtime import Runtime
from payorch.worker.deliveries import WebhookDeliveries
from tests.webhooks.helpers import CREATED, FakeDns
from tests.webhooks.receiver import Receiver, serve_receiver


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
    """Delete the endpoints this test created (their deliveries go with them).

    Before the test: tests share one database per backend and run one at a time, and the
    delivery job attempts every due delivery in it, so other test modules' unfinished
    deliveries are parked (the state a disabled endpoint leaves them in). The counts a test
    asserts are then its own, even after it jumps the clock by days."""
    async with runtime.database.transaction() as conn:
        await conn.execute(
            update(webhook_deliveries)
            .where(webhook_deliveries.c.status == "PENDING")
            .values(next_attempt_at=None)
        )
    yield
    if CREATED:
        async with runtime.database.transaction() as conn:
            await conn.execute(delete(webhook_endpoints).where(webhook_endpoints.c.id.in_(CREATED)))
        CREATED.clear()


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, object]:
    """Chosen by indirect parametrization (helpers.PRIVATE_ON / PRIVATE_OFF); a module may
    still define its own."""
    overrides: dict[str, object] = getattr(request, "param", {})
    return overrides


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as server:
        yield server


@pytest.fixture
async def deliveries(runtime: Runtime) -> AsyncIterator[WebhookDeliveries]:
    job = WebhookDeliveries()
    yield job
    await job.drain()
