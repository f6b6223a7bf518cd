"""Fixtures of the webhook tests: a local receiver and a delivery job driven by the test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from payorch.runtime import Runtime
from payorch.worker.deliveries import WebhookDeliveries
from tests.webhooks.receiver import Receiver, serve_receiver


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as server:
        yield server


@pytest.fixture
async def deliveries(runtime: Runtime) -> AsyncIterator[WebhookDeliveries]:
    job = WebhookDeliveries()
    yield job
    await job.drain()
