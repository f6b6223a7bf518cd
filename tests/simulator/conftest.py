"""Fixtures of the simulator tests: the service with a notification receiver beside it (the
helpers are in tests/simulator/helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.runtime import Runtime
from tests.simulator.helpers import HOOK_PATH, Receiver


@pytest.fixture
async def app_client(runtime: Runtime) -> AsyncIterator[tuple[httpx.AsyncClient, Receiver]]:
    receiver = Receiver()
    app = create_app(runtime=runtime)

    async def hook(request: Request) -> Response:
        receiver.received.append(
            {
                "query": dict(request.query_params),
                "headers": dict(request.headers),
                "body": await request.body(),
            }
        )
        if receiver.failures_left > 0:
            receiver.failures_left -= 1
            return Response(status_code=503)
        return Response(status_code=200)

    # The in-process calls of runtime.http (the simulator's notifications) go to the in-process
    # app of the first app built over the runtime (payorch.app.create_in_process_app).
    in_process = runtime.local_app.get()
    assert isinstance(in_process, FastAPI) and in_process is not app
    in_process.add_api_route(HOOK_PATH, hook, methods=["POST"])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as http:
        yield http, receiver


@pytest.fixture
async def sim(app_client: tuple[httpx.AsyncClient, Receiver]) -> httpx.AsyncClient:
    return app_client[0]


@pytest.fixture
def receiver(app_client: tuple[httpx.AsyncClient, Receiver]) -> Receiver:
    return app_client[1]
