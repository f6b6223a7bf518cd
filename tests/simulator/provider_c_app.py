"""Provider C's simulator served over a test runtime: the API app and the in-process app (where
the adapter's MOCK calls and the simulator's events go), with a receiver of events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx
import pytest
from fastapi import FastAPI, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.providers.provider_c.registration import mock_credentials
from payorch.runtime import Runtime

C = "/simulator/provider_c"
HOOK_PATH = "/test-hooks/provider-c"
HOOK_URL = "http://testserver" + HOOK_PATH


@dataclass
class Events:
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    failures_left: int = 0


def c_headers(runtime: Runtime, application_id: str) -> dict[str, str]:
    key = mock_credentials(runtime.cipher, application_id)["secret_key"]
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
async def c_app(runtime: Runtime) -> AsyncIterator[tuple[httpx.AsyncClient, Events]]:
    events = Events()
    app = create_app(runtime=runtime)
    in_process = runtime.local_app.get()
    assert isinstance(in_process, FastAPI)

    async def hook(request: Request) -> Response:
        events.received.append((dict(request.headers), await request.body()))
        if events.failures_left > 0:
            events.failures_left -= 1
            return Response(status_code=503)
        return Response(status_code=200)

    in_process.add_api_route(HOOK_PATH, hook, methods=["POST"])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as http:
        yield http, events


def session_form(reference: str = "payi_test", **overrides: str) -> dict[str, str]:
    form = {
        "mode": "payment",
        "line_items[0][price_data][currency]": "clp",
        "line_items[0][price_data][unit_amount]": "15000",
        "line_items[0][price_data][product_data][name]": "Book",
        "line_items[0][quantity]": "1",
        "success_url": "http://testserver/back?session_id={CHECKOUT_SESSION_ID}",
        "cancel_url": "http://testserver/back?cancelled=1",
        "client_reference_id": reference,
        "metadata[payorch_notification_url]": HOOK_URL,
    }
    form.update(overrides)
    return form
