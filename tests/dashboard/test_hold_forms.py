"""The intent page's capture and void forms over plain HTTP (SQLite, PostgreSQL), on holds made at
a provider's simulator through the API: the amount typed under the one amount rule, refused
beside its field before any confirmation; each action confirmed on a page of its own, in the
currency's format; then done through payorch.payments.holds (the provider's books, the events and
the activity log say so). A role without captures:write sees no form and a forged post is refused
with nothing changed; a post without the session's token is refused too. The payments list
filters holds and says their deadline; the overview lists them and counts captured money."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from payorch.runtime import Runtime
from tests.dashboard.roles_world import sign_in_as_role, snapshot
from tests.dashboard.signing import sign_in
from tests.holding import Held, held_payment
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import events_of


def refusal(page: str) -> str:
    found = re.search(r'<p class="field-error" id="capture-error" role="alert">([^<]+)</p>', page)
    assert found, page
    return " ".join(found.group(1).split())


async def payment_of(client: httpx.AsyncClient, app: Sandbox, held: Held) -> dict[str, Any]:
    answer = await client.get(f"/v1/payments/{held.payment_id}", headers=app.headers)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


@pytest.fixture
async def app(runtime: Runtime) -> Sandbox:
    return await mock_sandbox(runtime)


async def test_a_part_of_a_hold_is_captured_after_confirming(
    client: httpx.AsyncClient, app: Sandbox, runtime: Runtime
) -> None:
    held = await held_payment(client, app)  # USD 1,500.00 at provider C
    csrf = await sign_in(client, app)
    page = f"/dashboard/payments/{held.intent_id}"
    shown = await client.get(page)
    assert "Held: waiting for a capture." in shown.text and 'id="capture-form"' in shown.text
    assert re.search(r"\$1,500\.00, capture by \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 7 days\)", shown.text)
    url = page + "/capture"

    for typed, said in (("10,50", "only separates thousands"), ("1e2", "is not an amount")):
        refused = await client.post(url, data={"csrf": csrf, "hold_key": "k1", "amount": typed})
        assert refused.status_code == 400 and said in refusal(refused.text), refused.text
        assert f'value="{typed}"' in refused.text  # the form as it was sent
    over = await client.post(url, data={"csrf": csrf, "hold_key": "k1", "amount": "1,500.01"})
    assert over.status_code == 400, over.text
    assert refusal(over.text) == (
        "Not captured: $1,500.01 is more than is held. At most $1,500.00 can be captured: type that "
        "or less, or leave the amount empty to capture all of it."
    )
    forced = await client.post(  # a confirmation may not carry more either
        url, data={"csrf": csrf, "hold_key": "k1", "amount": "1,500.01", "confirmed": "150001"}
    )
    assert forced.status_code == 400

    asked = await client.post(url, data={"csrf": csrf, "hold_key": "k2", "amount": "1,000"})
    assert asked.status_code == 200 and "Capture $1,000.00?" in asked.text, asked.text
    assert "the other $500.00 is released to them" in asked.text and "<code>1,000</code>" in asked.text
    assert (await payment_of(client, app, held))["status"] == "REQUIRES_CAPTURE"  # nothing moved yet
    fields = {"csrf": csrf, "hold_key": "k2", "amount": "1,000", "confirmed": "100000"}
    done = await client.post(url, data=fields)
    assert done.status_code == 303 and done.headers["location"].endswith("?notice=captured"), done.text
    again = await client.post(url, data=fields)  # a double submit: one capture
    assert again.status_code == 303, again.text

    paid = await payment_of(client, app, held)
    assert (paid["status"], paid["amount_captured"], paid["amount_released"]) == (
        "AUTHORIZED",
        100_000,
        50_000,
    )
    types = [e["type"] for e in await events_of(runtime, held.intent_id)]
    assert types.count("payment.captured") == 1, types
    log = await client.get(
        "/v1/admin/activity", params={"action": "payment.capture_requested"}, headers=app.headers
    )
    [entry] = log.json()["items"]
    assert entry["actor"]["type"] == "user" and entry["resource"]["id"] == held.payment_id, entry
    after = await client.get(page)
    assert "The provider captured the payment" not in after.text  # the notice is the redirect's
    assert 'id="capture-form"' not in after.text and "all that is left, $1,000.00" in after.text
    assert "$500.00 (back to the buyer)" in after.text


async def test_a_hold_is_voided_after_confirming(client: httpx.AsyncClient, app: Sandbox) -> None:
    held = await held_payment(client, app, amount=20_000, currency="CLP")
    csrf = await sign_in(client, app)
    url = f"/dashboard/payments/{held.intent_id}/void"
    asked = await client.post(url, data={"csrf": csrf, "hold_key": "v1"})
    assert asked.status_code == 200 and "Void the hold of CLP 20,000?" in asked.text, asked.text
    assert (await payment_of(client, app, held))["status"] == "REQUIRES_CAPTURE"
    done = await client.post(url, data={"csrf": csrf, "hold_key": "v1", "confirmed": held.payment_id})
    assert done.status_code == 303 and done.headers["location"].endswith("?notice=voided"), done.text
    paid = await payment_of(client, app, held)
    assert (paid["status"], paid["amount_released"]) == ("VOIDED", 20_000)
    page = await client.get(f"/dashboard/payments/{held.intent_id}?notice=voided")
    assert "Voided; nothing was charged." in page.text and "The provider released the hold" in page.text
    late = await client.post(url, data={"csrf": csrf, "hold_key": "v2", "confirmed": held.payment_id})
    assert late.headers["location"].endswith("?notice=not-held")  # nothing sent twice


async def test_a_viewer_sees_no_hold_forms_and_forged_posts_change_nothing(
    client: httpx.AsyncClient, app: Sandbox, runtime: Runtime
) -> None:
    held = await held_payment(client, app)
    csrf = await sign_in_as_role(client, app, "viewer")
    page = await client.get(f"/dashboard/payments/{held.intent_id}")
    assert page.status_code == 200 and "Held: waiting for a capture." in page.text
    assert "capture-form" not in page.text and "void-form" not in page.text
    before = await snapshot(runtime, app.application_id)
    for action, fields in (
        ("capture", {"amount": "1", "confirmed": "100"}),
        ("void", {"confirmed": held.payment_id}),
    ):
        forged = await client.post(
            f"/dashboard/payments/{held.intent_id}/{action}",
            data={"csrf": csrf, "hold_key": action, **fields},
        )
        assert forged.status_code == 403, forged.text
        assert "Your role (viewer) cannot capture or void payments." in forged.text
    assert await snapshot(runtime, app.application_id) == before

    await sign_in(client, app)  # an owner, but the form is not from their session
    stolen = await client.post(
        f"/dashboard/payments/{held.intent_id}/void",
        data={"csrf": csrf, "hold_key": "x", "confirmed": held.payment_id},
    )
    assert stolen.status_code == 403 and "Form expired" in stolen.text
    after = await snapshot(runtime, app.application_id)  # signing the owner in wrote their rows
    assert [after[t] for t in ("payments", "payment_intents")] == [
        before[t] for t in ("payments", "payment_intents")
    ]
    assert (await payment_of(client, app, held))["status"] == "REQUIRES_CAPTURE"


async def test_the_list_and_the_overview_show_holds_and_their_deadline(
    client: httpx.AsyncClient, app: Sandbox
) -> None:
    held = await held_payment(client, app, reference="order-held")
    other = await held_payment(client, app, amount=50_000, reference="order-taken")
    captured = await client.post(f"/v1/payments/{other.payment_id}/capture", json={}, headers=app.headers)
    assert captured.status_code == 200, captured.text
    await sign_in(client, app)
    listed = await client.get("/dashboard/payments", params={"status": "REQUIRES_CAPTURE"})
    assert listed.status_code == 200, listed.text
    assert held.intent_id in listed.text and other.intent_id not in listed.text
    assert re.search(r"capture by \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 7 days\)", listed.text), listed.text
    everything = await client.get("/dashboard/payments")
    assert everything.text.count("capture by") == 1  # the captured one has no deadline

    overview = await client.get("/dashboard/overview")
    assert overview.status_code == 200, overview.text
    holds = overview.text[overview.text.index('id="holds-title"') :]
    assert "$1,500.00" in holds and held.intent_id in holds and other.intent_id not in holds
    # Money taken counts what was captured, not what is held: $500.00 of the two.
    assert re.search(r"<td>USD</td><td class=\"num\">\$500\.00</td>", overview.text), overview.text
