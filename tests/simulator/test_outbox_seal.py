"""A Notifier's ``seal``: the body POSTed is made at each attempt from the body as written (a
provider whose signature is inside the body, with the owner's secret, which a settle control's
move does not have at hand); without one, the body goes as written."""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.crypto import Cipher
from payorch.jsontypes import JsonObject
from payorch.runtime import Runtime
from payorch.simulator.outbox import sender, write
from payorch.simulator.outbox.records import Notification, Notifier, json_content

HOOK = "/test-hooks/sealed"


def _sealed(cipher: Cipher, notification: Notification) -> JsonObject:
    return {**notification.body, "signed_for": notification.owner}


@pytest.mark.parametrize(("seal", "expected"), [(_sealed, {"signed_for": "app_x"}), (None, {})])
async def test_the_body_sent_is_sealed_at_each_attempt(
    runtime: Runtime, seal: object, expected: JsonObject
) -> None:
    create_app(runtime=runtime)
    in_process = runtime.local_app.get()
    assert isinstance(in_process, FastAPI)
    received: list[JsonObject] = []

    async def hook(request: Request) -> Response:
        received.append(json.loads(await request.body()))
        return Response(status_code=200)

    in_process.add_api_route(HOOK, hook, methods=["POST"])
    notifier = Notifier(provider="provider_sealed", sign=json_content, seal=_sealed if seal else None)
    async with runtime.phases.transaction() as conn:
        made = await write.enqueue(
            conn, runtime.settings.public_url, provider=notifier.provider, owner="app_x", subject="s_1",
            url=runtime.settings.public_url + HOOK, body={"item": 1}, now=runtime.clock.now(),
        )  # fmt: skip
    assert made is not None
    await sender.deliver_now(runtime, runtime.phases, notifier, [made])
    assert received == [{"item": 1, **expected}]
