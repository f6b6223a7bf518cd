"""Fixtures of the webhook tests: a local receiver and a delivery job driven by the test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import delete

from payorch.db.tables.webhooks import webhook_endpoints
from payorch.runtime import Runtime
from payorch.worker.deliveries import WebhookDeliveries
from tests.webhooks.helpers import CREATED
from tests.webhooks.receiver import Receiver, serve_receiver


@pytest.fixture(autouse=True)
async def forget_endpoints(runtime: Runtime) -> AsyncIterator[None]:
    """Delete the endpoints this test created (their deliveries go with them)."""
    yield
    if CREATED:
        async with runtime.database.transaction() as conn:
            await conn.execute(delete(webhook_endpoints).where(webhook_endpoints.c.id.in_(CREATED)))
        CREATED.clear()


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as server:
        yield server


@pytest.fixture
async def deliveries(runtime: Runtime) -> AsyncIterator[WebhookDeliveries]:
    job = WebhookDeliveries()
    yield job
    await job.drain()
