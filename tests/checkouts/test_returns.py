"""Returns: forged, double, racing, from a replaced checkout; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import httpx

from payorch.runtime import Runtime
from tests.checkouts.helpers import authorized_events, payment_count
from tests.kit import mock_sandbox
from tests.providers.helpers import (
    A,
    checkout,
    choose_without_returning,
    events_of,
    pay,
    query_of,
    read,
    start,
)


async def test_forged_returns_change_nothing(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    other, other_body = await start(client, sandbox)
    base = f"/v1/checkout-returns/{A}/{intent['id']}"
    forged = [
        {"token_ws": "f" * 64},  # a token that does not exist
        {"token_ws": other_body["checkout"]["fields"]["token_ws"]},  # another intent's token
        {"TBK_TOKEN": "x" * 64, "TBK_ORDEN_COMPRA": "o", "TBK_ID_SESION": "s"},  # a fake abort
        {"TBK_ORDEN_COMPRA": "o", "TBK_ID_SESION": "s"},  # a fake timeout
        {},
    ]
    for params in forged:
        response = await client.get(base, params=params)
        assert response.status_code == 303, response.text
        assert query_of(response.headers["location"])["payment_intent_id"] == intent["id"]
    # The browser's parameters say nothing: the other buyer approves, and a return carrying
    # that token on this intent still changes nothing here.
    await pay(client, other_body, "approve")
    response = await client.get(base, params={"token_ws": other_body["checkout"]["fields"]["token_ws"]})
    assert response.status_code == 303
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    assert (await read(client, sandbox, other["id"]))["status"] == "AUTHORIZED"
    # Unknown intents and providers are 404s.
    assert (await client.get(f"/v1/checkout-returns/{A}/payi_unknown")).status_code == 404
    assert (await client.get(f"/v1/checkout-returns/paypal/{intent['id']}")).status_code == 404
    # A return naming the other provider does nothing either.
    response = await client.get(f"/v1/checkout-returns/provider_b_redirect_get/{intent['id']}")
    assert response.status_code == 303
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"


async def test_double_return_authorizes_once(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    first = await client.get(location)
    second = await client.get(location)
    assert first.status_code == second.status_code == 303
    assert first.headers["location"] == second.headers["location"]
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    assert await payment_count(runtime, intent["id"]) == 1
    assert authorized_events(await events_of(runtime, intent["id"])) == 1


async def test_racing_returns_commit_and_authorize_once(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    responses = await asyncio.gather(*(client.get(location) for _ in range(5)))
    assert [r.status_code for r in responses] == [303] * 5
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    assert await payment_count(runtime, intent["id"]) == 1
    assert authorized_events(await events_of(runtime, intent["id"])) == 1


async def test_return_from_a_replaced_checkout_never_authorizes(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, first = await start(client, sandbox)
    replaced = await checkout(client, sandbox, intent["id"], A)
    assert replaced.status_code == 200, replaced.text
    second = replaced.json()
    assert second["checkout"]["fields"] != first["checkout"]["fields"]
    # The buyer still had the first page open and approves there: nothing happens.
    trip = await pay(client, first, "approve")
    assert trip.left_to is not None
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    assert await payment_count(runtime, intent["id"]) == 0
    # The current checkout pays.
    await pay(client, second, "approve")
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED"
    types = [t["type"] for t in read_back["timeline"]]
    assert types == [
        "payment_intent.created",
        "payment.checkout.started",
        "payment.checkout.started",
        "payment.authorized",
    ]


async def test_post_return_is_accepted(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    token = query_of(location)["token_ws"]
    response = await client.post(f"/v1/checkout-returns/{A}/{intent['id']}", data={"token_ws": token})
    assert response.status_code == 303
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"


async def test_a_return_racing_a_replacement_authorizes_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    returned, replaced = await asyncio.gather(
        client.get(location), checkout(client, sandbox, intent["id"], "provider_b_redirect_get")
    )
    assert returned.status_code == 303
    # Paid at A: the replacement is refused whichever came first.
    assert replaced.status_code == 409, replaced.text
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    assert await payment_count(runtime, intent["id"]) == 1
    assert authorized_events(await events_of(runtime, intent["id"])) == 1
