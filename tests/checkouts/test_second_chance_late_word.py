"""A second chance whose decline is said only after the buyer is back (docs/routing.md, "A second
chance after a decline"): provider D's notification is its word and may come after the buyer's
return. The buyer goes back to the shop with the intent REQUIRES_ACTION; when the word comes, the
declined attempt is recorded and the second chance offered (``payment.attempt_failed``), and the
retry page offers the next provider. SQLite and PostgreSQL."""

from __future__ import annotations

from urllib.parse import urljoin

import httpx
import pytest

from payorch.providers.provider_d import PROVIDER_D
from payorch.runtime import Runtime
from tests.checkouts.second_chance_helpers import started, types_of
from tests.conformance.network import Network
from tests.kit import mock_sandbox
from tests.providers.helpers import RETURN_URL, A, B, events_of, open_checkout, read
from tests.routing.helpers import put_routing


@pytest.fixture
def local_app() -> Network:
    """The in-process app behind a network that can hold the provider's notifications."""
    return Network()


async def test_the_offer_comes_with_a_late_word(
    client: httpx.AsyncClient, runtime: Runtime, local_app: Network
) -> None:
    sandbox = await mock_sandbox(runtime)
    rule = {"name": "d-first", "if": {"currency": ["CLP"]}, "then": {"priority": [PROVIDER_D, B, A]}}
    routing = {"rules": [rule], "on_decline": {"retry": True, "max_attempts": 3}}
    assert (await put_routing(client, sandbox, routing)).status_code == 200
    intent_id, body = await started(client, sandbox)
    assert body["provider"] == PROVIDER_D
    local_app.hold_notifications()
    try:
        trip = await open_checkout(client, body)
        assert trip.page is not None, trip
        form = trip.page.form_with_button("outcome", "reject")
        url = urljoin(trip.page.url, form.action)
        send = client.post if form.method == "POST" else client.get
        fields = {**form.fields, "outcome": "reject"}
        rejected = await (send(url, data=fields) if form.method == "POST" else send(url, params=fields))
        assert rejected.status_code in (302, 303), rejected.text
        back = await client.get(urljoin(url, rejected.headers["location"]))
        assert back.status_code == 303 and back.headers["location"].startswith(RETURN_URL), back.headers
    finally:
        late = local_app.release()
    assert late, "the refusal is said by a notification"
    assert (await read(client, sandbox, intent_id))["status"] == "REQUIRES_ACTION"
    assert "payment.attempt_failed" not in types_of(await events_of(runtime, intent_id))
    for held in late:
        headers = {k: v for k, v in held.headers.items() if k not in ("host", "content-length")}
        path = held.path + (f"?{held.query}" if held.query else "")
        delivered = await client.post(path, headers=headers, content=held.body)
        assert delivered.status_code == 200, delivered.text
    intent = await read(client, sandbox, intent_id)
    assert intent["status"] == "REQUIRES_ACTION" and intent["last_payment_error"]["provider"] == PROVIDER_D
    offered = [e for e in await events_of(runtime, intent_id) if e["type"] == "payment.attempt_failed"]
    assert len(offered) == 1 and offered[0]["data"]["next_provider"] == B, offered
    page = await client.get(f"/checkout-retry/{intent_id}")
    assert page.status_code == 200 and "retry" in page.text, page.text
