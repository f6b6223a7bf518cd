"""Every answer says where its time went: ``Server-Timing: app;dur=..., db;dur=..., provider;dur=...``
(docs/api.md). Over HTTP on SQLite and PostgreSQL: a create calls no provider (provider 0) and
waits on the database; a checkout against the simulator and the buyer's return (provider A's
commit) wait on the simulator; a read, an error and an unknown path still carry the header."""

from __future__ import annotations

import re

import httpx

from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.providers.helpers import A, B, checkout, choose_without_returning, create_intent

ENTRY = re.compile(r"^(app|db|provider);dur=(\d+(?:\.\d+)?)$")


def timing_of(response: httpx.Response) -> dict[str, float]:
    """The header's three entries, in order, each a number of milliseconds."""
    value = response.headers.get("server-timing")
    assert value is not None, (response.status_code, dict(response.headers))
    entries = [ENTRY.match(part.strip()) for part in value.split(",")]
    assert all(entries), value
    parsed = {m.group(1): float(m.group(2)) for m in entries if m}
    assert list(parsed) == ["app", "db", "provider"], value
    return parsed


async def test_a_payment_answers_say_what_waited_on_the_provider(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    created = await client.post(
        "/v1/payment-intents",
        json={
            "merchant_account_id": sandbox.merchant_account_id,
            "external_reference": "timing-1",
            "amount": 1500,
            "currency": "CLP",
            "return_url": "https://shop.example/return",
        },
        headers=sandbox.headers,
    )
    assert created.status_code == 201, created.text
    create_timing = timing_of(created)
    assert create_timing["provider"] == 0 and create_timing["db"] > 0, create_timing
    assert create_timing["app"] > 0, create_timing

    started = await checkout(client, sandbox, created.json()["id"], A)
    assert started.status_code == 200, started.text
    checkout_timing = timing_of(started)
    assert checkout_timing["provider"] > 0 and checkout_timing["db"] > 0, checkout_timing

    back = await client.get(await choose_without_returning(client, started.json(), "approve"))  # A commits
    assert back.status_code == 303, back.text  # the return handler sends the buyer to the shop
    assert timing_of(back)["provider"] > 0, back.headers["server-timing"]

    read = await client.get(f"/v1/payment-intents/{created.json()['id']}", headers=sandbox.headers)
    assert read.status_code == 200 and read.json()["status"] == "AUTHORIZED", read.text
    assert timing_of(read)["provider"] == 0 and timing_of(read)["db"] > 0


async def test_errors_and_unknown_paths_carry_it_too(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    missing = await client.get("/v1/payment-intents/payi_missing", headers=sandbox.headers)
    assert missing.status_code == 404
    unauthenticated = await client.get("/v1/payment-intents/payi_missing")
    assert unauthenticated.status_code == 401
    nowhere = await client.get("/no/such/path")
    assert nowhere.status_code == 404
    for response in (missing, unauthenticated, nowhere):
        assert timing_of(response)["provider"] == 0


async def test_the_parts_add_up_to_no_more_than_the_answer_took(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """app + db + provider is the server's time to the answer's start: below the client's."""
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    started = await checkout(client, sandbox, intent["id"], B)
    parts = timing_of(started)
    assert 0 < sum(parts.values()) <= started.elapsed.total_seconds() * 1000 + 1, (parts, started.elapsed)
