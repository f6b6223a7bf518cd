"""Every notice about a payment or a refund carries its intent's external_reference and metadata
(docs/api.md, "Outgoing notices"), read from the bodies a receiver got: an intent created,
checked out and paid at B, disputed (mediation) and won, refunded in part, then one cancelled by
the merchant; SQLite and PostgreSQL."""

from __future__ import annotations

import orjson
import pytest

from payorch.client import Event
from payorch.events.catalogue import CATALOGUE, IntentEventData
from tests.checkouts.helpers import control
from tests.kit import mock_sandbox
from tests.providers.helpers import B, create_intent, pay, read, start
from tests.webhooks.helpers import Hooks, create_endpoint

pytestmark = pytest.mark.settings(provider_timeout_seconds=5.0)  # the simulator's refunds answer in time

REFERENCE, METADATA = "order-77", {"cart": "c-9", "channel": "app"}


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_payment_and_refund_notices_carry_the_intents_reference_and_metadata(hooks: Hooks) -> None:
    client, _, runtime, _, receiver, deliveries = hooks.parts()
    sandbox = await mock_sandbox(runtime)
    await create_endpoint(client, sandbox, receiver.url("/all"))
    intent, body = await start(client, sandbox, B, external_reference=REFERENCE, metadata=METADATA)
    await pay(client, body, "approve")
    for outcome in ("mediation", "mediation_won"):
        settled = await control(client, sandbox, "settle", payment_intent_id=intent["id"], outcome=outcome)
        assert settled.status_code == 200, settled.text
    refunds = f"/v1/payments/{(await read(client, sandbox, intent['id']))['payment']['id']}/refunds"
    refunded = await client.post(refunds, json={"amount": 500}, headers=sandbox.headers)
    assert refunded.status_code == 201, refunded.text
    other = await create_intent(client, sandbox, external_reference="order-78")  # no metadata
    cancelled = await client.post(
        f"/v1/payment-intents/{other['id']}/cancel", json={}, headers=sandbox.headers
    )
    assert cancelled.status_code == 200, cancelled.text

    await deliveries.run_until_idle(runtime)
    bodies = [orjson.loads(request.body) for request in receiver.at("/all")]
    about_intents = [b for b in bodies if issubclass(CATALOGUE[b["type"]], IntentEventData)]
    assert {b["type"] for b in about_intents} == {
        "payment_intent.created",
        "payment.checkout.started",
        "payment.authorized",
        "payment.disputed",
        "payment.dispute_closed",
        "refund.requested",
        "refund.succeeded",
        "payment.cancelled",
    }
    for notice in about_intents:
        data = notice["data"]
        expected = (REFERENCE, METADATA) if data["payment_intent_id"] == intent["id"] else ("order-78", {})
        assert list(data)[:3] == ["payment_intent_id", "external_reference", "metadata"], notice
        assert (data["external_reference"], data["metadata"]) == expected, notice
        received = Event.model_validate(notice)  # as payorch.client reads a notice
        assert (received.external_reference, received.metadata) == expected
    # The list of events holds the same bodies.
    listed = await client.get("/v1/events", params={"type": "payment.authorized"}, headers=sandbox.headers)
    [authorized] = listed.json()["items"]
    assert (authorized["data"]["external_reference"], authorized["data"]["metadata"]) == (REFERENCE, METADATA)
