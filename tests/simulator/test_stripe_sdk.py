"""The official ``stripe`` SDK, unchanged, against simulated provider C on a live server.

uvicorn serves the app on 127.0.0.1 (a free port, its own SQLite database) in a thread of this
process, so the test can also receive the simulator's signed events; the SDK talks to it over
TCP with the published test key (docs/simulator.md), only its API base pointed at
``{PUBLIC_URL}/simulator/provider_c``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import stripe
import uvicorn
from fastapi import FastAPI, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.http.routing import mount
from payorch.simulator.provider_c.simulated import SIMULATED
from tests.simulator.helpers import free_port

pytestmark = pytest.mark.slow

SECRET = "sdk-test-secret-key-0123456789abcdefghij"  # noqa: S105 - a test key
DOCS = Path(__file__).resolve().parents[2] / "docs" / "simulator.md"
# As docs/simulator.md prints them.
C_SECRET_KEY = "sk_test_payorchsandboxpublickey"  # noqa: S105
C_WEBHOOK_SECRET = "whsec_payorchsandboxpublicwebhooksecret"  # noqa: S105
HOOK_PATH = "/test-hooks/stripe-events"
RECEIVED: list[tuple[str, bytes]] = []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    db = tmp_path_factory.mktemp("stripe") / "sdk.db"
    env = {**os.environ, "PAYORCH_DATABASE_URL": f"sqlite:///{db}", "PAYORCH_SECRET_KEY": SECRET}
    subprocess.run([sys.executable, "-m", "payorch.cli", "migrate"], env=env, check=True, capture_output=True)
    runtime = build_runtime(Settings(database_url=f"sqlite:///{db}", secret_key=SECRET, public_url=url))
    app = create_app(runtime)
    in_process = runtime.local_app.get()
    assert isinstance(in_process, FastAPI)
    for served in (app, in_process):
        if not any(getattr(r, "path", "").startswith("/simulator/provider_c") for r in served.router.routes):
            mount(served, *SIMULATED.routers)

    async def hook(request: Request) -> Response:
        RECEIVED.append((request.headers.get("stripe-signature", ""), await request.body()))
        return Response(status_code=200)

    in_process.add_api_route(HOOK_PATH, hook, methods=["POST"])
    app.add_api_route(HOOK_PATH, hook, methods=["POST"])
    live = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not live.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    stripe.api_key = C_SECRET_KEY
    stripe.api_base = url + "/simulator/provider_c"
    try:
        yield url
    finally:
        live.should_exit = True
        thread.join(timeout=10)


def _session(server: str, reference: str) -> stripe.checkout.Session:
    return stripe.checkout.Session.create(
        mode="payment",
        line_items=[
            {
                "price_data": {"currency": "clp", "unit_amount": 15000, "product_data": {"name": "Book"}},
                "quantity": 1,
            }
        ],
        success_url=server + "/done?session_id={CHECKOUT_SESSION_ID}",
        cancel_url=server + "/cancelled",
        client_reference_id=reference,
        metadata={"payorch_notification_url": server + HOOK_PATH},
    )


def test_the_public_key_is_the_documented_one() -> None:
    text = DOCS.read_text()
    assert f"`{C_SECRET_KEY}`" in text and f"`{C_WEBHOOK_SECRET}`" in text


def test_checkout_pay_refund_expire_list_with_the_official_sdk(server: str) -> None:
    session = _session(server, "order-sdk-1")
    assert session.status == "open" and session.url
    read = stripe.checkout.Session.retrieve(session.id, expand=["payment_intent"])
    assert read.payment_intent is None and read.amount_total == 15000
    paid = httpx.post(session.url, data={"outcome": "approve"})  # the page's form, as a browser
    assert paid.status_code == 303
    assert paid.headers["location"] == f"{server}/done?session_id={session.id}"
    after = stripe.checkout.Session.retrieve(session.id, expand=["payment_intent"])
    assert (after.status, after.payment_status) == ("complete", "paid")
    intent = after.payment_intent
    assert isinstance(intent, stripe.PaymentIntent) and intent.status == "succeeded"
    refund = stripe.Refund.create(payment_intent=intent.id, amount=5000)
    assert (refund.status, refund.amount, refund.payment_intent) == ("succeeded", 5000, intent.id)
    listed = stripe.checkout.Session.list(payment_intent=intent.id)
    assert [s.id for s in listed.data] == [session.id]
    other = _session(server, "order-sdk-2")
    expired = stripe.checkout.Session.expire(other.id)
    assert expired.status == "expired"
    with pytest.raises(stripe.InvalidRequestError):
        stripe.checkout.Session.expire(other.id)


def test_an_event_the_simulator_signs_verifies_with_construct_event(server: str) -> None:
    RECEIVED.clear()
    session = _session(server, "order-sdk-3")
    httpx.post(session.url, data={"outcome": "approve"})
    deadline = time.monotonic() + 10
    while not RECEIVED:
        assert time.monotonic() < deadline, "no event arrived"
        time.sleep(0.05)
    signature, body = RECEIVED[0]
    event = stripe.Webhook.construct_event(body, signature, C_WEBHOOK_SECRET)
    assert event.type == "checkout.session.completed"
    assert event.data.object.id == session.id
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(body, signature, "whsec_wrong")
