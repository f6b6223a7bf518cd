"""A delivered notice carries the Standard Webhooks headers beside the X-Pay ones: verified
with that specification's own published library (`standardwebhooks` from PyPI), with the
endpoint secret's whsec_ form, and with payorch.client either way."""

from __future__ import annotations

import base64

import orjson
import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from payorch.client.webhooks import standard_secret, verify
from tests.webhooks.helpers import Hooks, create_endpoint, create_intent, independent_signature_ok


async def test_a_notice_verifies_with_the_standard_webhooks_library_and_the_client(hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    endpoint_id, secret = await create_endpoint(client, sandbox, receiver.url("/std"))
    await create_intent(client, sandbox)
    assert await deliveries.run_until_idle(runtime) == 1
    [request] = receiver.requests
    headers = request.headers
    body = orjson.loads(request.body)
    # The X-Pay headers and their signature stay exactly as the contract says.
    assert independent_signature_ok(secret, headers, request.body)
    assert headers["webhook-id"] == headers["x-pay-event-id"] == body["id"]
    assert headers["webhook-timestamp"] == headers["x-pay-timestamp"]
    assert headers["webhook-signature"].startswith("v1,")

    whsec = "whsec_" + base64.b64encode(secret.encode()).decode()
    assert standard_secret(secret) == whsec
    assert Webhook(whsec).verify(request.body, headers) == body
    with pytest.raises(WebhookVerificationError):
        Webhook(whsec).verify(request.body.replace(b"1500", b"1501"), headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(standard_secret("0" * 64)).verify(request.body, headers)

    standard_only = {k: v for k, v in headers.items() if not k.startswith("x-pay-")}
    x_pay_only = {k: v for k, v in headers.items() if not k.startswith("webhook-")}
    for given, key in ((standard_only, secret), (standard_only, whsec), (x_pay_only, secret)):
        assert verify(request.body, given, key).id == body["id"]
