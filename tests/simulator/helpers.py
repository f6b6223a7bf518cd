"""Helpers of the simulator tests: its paths, MOCK credential headers, a notification receiver
record, and the steps of a buyer at the simulated pages."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.http.routing import mount
from payorch.runtime import Runtime
from payorch.simulator.credentials import mock_credentials
from payorch.simulator.simulated import SimulatedProvider
from tests.live import START_SECONDS

A_API = "/simulator/provider_a/rswebpaytransaction/api/webpay/v1.2/transactions"
A_PAGE = "/simulator/provider_a/webpayserver/initTransaction"
A_DECIDE = "/simulator/provider_a/webpayserver/decide"
B = "/simulator/provider_b"
B_PAGE = B + "/checkout/v1/redirect"
RETURN_A = "http://testserver/v1/checkout-returns/provider_a_redirect_post/"
RETURN_B = "http://testserver/v1/checkout-returns/provider_b_redirect_get/"
HOOK_PATH = "/test-hooks/provider-b"


def free_port() -> int:
    """A TCP port free on loopback now (for a server the test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def a_headers(runtime: Runtime, application_id: str) -> dict[str, str]:
    creds = mock_credentials(runtime.cipher, "provider_a", application_id)
    return {"Tbk-Api-Key-Id": creds["commerce_code"], "Tbk-Api-Key-Secret": creds["api_key"]}


def b_headers(runtime: Runtime, application_id: str) -> dict[str, str]:
    token = mock_credentials(runtime.cipher, "provider_b", application_id)["access_token"]
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Receiver:
    """Stands in for the service's provider-notification endpoint (same origin as PUBLIC_URL)."""

    received: list[dict[str, Any]] = field(default_factory=list)
    failures_left: int = 0

    url = "http://testserver" + HOOK_PATH


async def create_a(
    http: httpx.AsyncClient, headers: dict[str, str], intent_id: str = "payi_test", **overrides: Any
) -> str:
    body = {
        "buy_order": "order-1",
        "session_id": "session-1",
        "amount": 1500,
        "return_url": RETURN_A + intent_id,
    }
    body.update(overrides)
    answer = await http.post(A_API, json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["token"])


async def decide_a(http: httpx.AsyncClient, token: str, outcome: str) -> httpx.Response:
    return await http.post(A_DECIDE, data={"token_ws": token, "outcome": outcome})


def preference_body(reference: str = "payi_test", **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "items": [{"id": "i1", "title": "Book", "quantity": 2, "unit_price": 750, "currency_id": "CLP"}],
        "back_urls": {
            "success": RETURN_B + reference,
            "failure": RETURN_B + reference + "?leg=failure",
            "pending": RETURN_B + reference + "?leg=pending",
        },
        "auto_return": "all",
        "external_reference": reference,
        "notification_url": Receiver.url,
    }
    body.update(overrides)
    return body


async def create_b(http: httpx.AsyncClient, headers: dict[str, str], **overrides: Any) -> dict[str, Any]:
    answer = await http.post(B + "/checkout/preferences", json=preference_body(**overrides), headers=headers)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def pay_b(http: httpx.AsyncClient, preference_id: str, outcome: str) -> httpx.Response:
    return await http.post(B_PAGE, data={"pref_id": preference_id, "outcome": outcome})


def query_of(response: httpx.Response) -> dict[str, str]:
    return dict(httpx.URL(response.headers["location"]).params)


@dataclass
class HookedServer:
    """The app served by uvicorn in a thread of the test's process (``url``), with the SANDBOX
    application its CLI created, and what the simulator POSTed to ``hook_path`` there."""

    url: str
    sandbox: dict[str, str]
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)


@contextmanager
def hooked_server(
    directory: Path, secret: str, hook_path: str, simulated: SimulatedProvider
) -> Iterator[HookedServer]:
    """Serve the app (its own SQLite database in ``directory``) on a free loopback port, the
    provider's simulator routes mounted, and a hook at ``hook_path`` (same origin as the public
    URL, so the simulator sends its notifications to it) recording each POST."""
    url = f"http://127.0.0.1:{free_port()}"
    db = directory / "sdk.db"
    env = {**os.environ, "PAYORCH_DATABASE_URL": f"sqlite:///{db}", "PAYORCH_SECRET_KEY": secret}
    subprocess.run([sys.executable, "-m", "payorch.cli", "migrate"], env=env, check=True, capture_output=True)
    created = subprocess.run(
        [sys.executable, "-m", "payorch.cli", "applications", "create", "--name", "sdk"]
        + ["--environment", "SANDBOX", "--merchant-name", "SDK shop", "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    server = HookedServer(url, json.loads(created.stdout.strip().splitlines()[-1]))
    runtime = build_runtime(Settings(database_url=f"sqlite:///{db}", secret_key=secret, public_url=url))
    app = create_app(runtime)
    in_process = runtime.local_app.get()
    assert isinstance(in_process, FastAPI)
    base = f"/simulator/{simulated.name}"

    async def hook(request: Request) -> Response:
        server.received.append((dict(request.headers), await request.body()))
        return Response(status_code=200)

    for served in (app, in_process):
        if not any(getattr(r, "path", "").startswith(base) for r in served.router.routes):
            mount(served, *simulated.routers)
        served.add_api_route(hook_path, hook, methods=["POST"])
    live = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=int(url.rsplit(":", 1)[1]), log_level="warning")
    )
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_SECONDS
    while not live.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield server
    finally:
        live.should_exit = True
        thread.join(timeout=10)
