"""A simulated provider's notifications leave in a task detached from the answer that wrote them
(payorch.detached), never in that answer's background: a MOCK adapter's call to the simulator is
in process and waits for its whole ASGI call, so a notification that needs what the caller holds
(the checkout's lease while it waits for a capture) would wait for a caller that waits for it.

Here the receiver of the events holds each until the caller has its answer: every in-process
answer must come while the receiver waits, and the events arrive once it lets go."""

from __future__ import annotations

import asyncio
import json

import httpx
from fastapi import FastAPI, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.runtime import Runtime
from tests.kit import Sandbox
from tests.simulator.provider_c_app import HOOK_PATH, C, c_headers, session_form

ANSWER_BOUND = 10.0  # seconds: an answer held by its events never comes (the receiver waits)


async def test_an_in_process_answer_does_not_wait_for_the_notifications_it_wrote(
    runtime: Runtime, sandbox: Sandbox
) -> None:
    create_app(runtime=runtime)  # binds the in-process app the calls below go to
    in_process = runtime.local_app.get()
    assert isinstance(in_process, FastAPI)
    caller_has_answer = asyncio.Event()
    received: list[str] = []

    async def hook(request: Request) -> Response:
        received.append(json.loads(await request.body())["type"])
        await caller_has_answer.wait()  # as a webhook needing the lease the caller holds
        return Response(status_code=200)

    in_process.add_api_route(HOOK_PATH, hook, methods=["POST"])
    base = runtime.settings.public_url + C
    headers = c_headers(runtime, sandbox.application_id)

    async def in_process_call(path: str, form: dict[str, str], **extra: str) -> httpx.Response:
        call = runtime.http.post(base + path if path.startswith("/v1") else path, data=form, headers=extra)
        return await asyncio.wait_for(call, ANSWER_BOUND)

    manual = {"payment_intent_data[capture_method]": "manual"}
    made = await in_process_call("/v1/checkout/sessions", session_form("payi_lease", **manual), **headers)
    assert made.status_code == 200, made.text
    session = made.json()

    # The buyer pays: the page's answer comes while its events wait at the receiver.
    paid = await in_process_call(session["url"], {"outcome": "approve"})
    assert paid.status_code == 303
    caller_has_answer.set()
    await runtime.detached.drain()
    assert received == ["checkout.session.completed", "payment_intent.amount_capturable_updated"]

    # The capture (what payorch's capture waits for, holding the checkout's lease).
    caller_has_answer.clear()
    read = await runtime.http.get(f"{base}/v1/checkout/sessions/{session['id']}", headers=headers)
    intent_id = read.json()["payment_intent"]
    captured = await in_process_call(f"/v1/payment_intents/{intent_id}/capture", {}, **headers)
    assert captured.status_code == 200, captured.text
    assert captured.json()["status"] == "succeeded"
    caller_has_answer.set()
    await runtime.detached.drain()
    assert received[2:] == ["charge.captured", "payment_intent.succeeded"]
