"""GET /v1/admin/webhook-deliveries and the per-endpoint list with the same filters, through
HTTP on both databases: order, paging while deliveries arrive, each filter, tenancy."""

from __future__ import annotations

import httpx

from payorch.runtime import Runtime
from tests.kit import Sandbox, new_application
from tests.pages import ids, walk
from tests.webhooks.helpers import BASE, Hooks, create_endpoint, create_intent
from tests.webhooks.receiver import Receiver

ALL = "/v1/admin/webhook-deliveries"


async def test_filters_of_both_lists(hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    first_endpoint, first_intent = await hooks.queued("/a", "order-1")
    assert await deliveries.run_until_idle(runtime) == 1  # -> SUCCEEDED
    second_endpoint, second_intent = await hooks.queued("/b", "order-2")
    other = await new_application(runtime)
    await create_endpoint(client, other, receiver.url("/other"))
    await create_intent(client, other)

    every, _ = await walk(client, sandbox, ALL)
    assert [d["id"] for d in every] == sorted((d["id"] for d in every), reverse=True)
    assert len(every) == 3  # never the other application's
    [done] = [d for d in every if d["status"] == "SUCCEEDED"]
    pending = [d["id"] for d in every if d["status"] == "PENDING"]
    assert done["endpoint_id"] == first_endpoint and len(pending) == 2

    assert await ids(client, sandbox, ALL + "?status=PENDING") == pending
    assert await ids(client, sandbox, ALL + "?status=SUCCEEDED") == [done["id"]]
    assert await ids(client, sandbox, ALL + "?status=PENDING&status=SUCCEEDED") == [d["id"] for d in every]
    assert await ids(client, sandbox, ALL + "?status=EXHAUSTED") == []
    by_second, _ = await walk(client, sandbox, ALL + f"?endpoint_id={second_endpoint}")
    assert [d["endpoint_id"] for d in by_second] == [second_endpoint]
    assert len(await ids(client, sandbox, ALL + "?event_type=payment_intent.created")) == 3
    assert await ids(client, sandbox, ALL + "?event_type=payment.authorized") == []
    assert await ids(client, sandbox, ALL + f"?payment_intent_id={first_intent}") == [done["id"]]
    assert len(await ids(client, sandbox, ALL + f"?payment_intent_id={second_intent}")) == 2
    # from inclusive, to exclusive, as dates or timestamps
    newest = every[0]["created_at"]
    expected = [d["id"] for d in every if d["created_at"] >= newest]
    assert await ids(client, sandbox, ALL + f"?from={newest}") == expected
    assert await ids(client, sandbox, ALL + f"?to={newest}") == [
        d["id"] for d in every if d["id"] not in expected
    ]
    assert await ids(client, sandbox, ALL + "?to=2000-01-01") == []

    # The per-endpoint list keeps working and takes the same filters (its endpoint is the path's).
    one = f"{BASE}/{first_endpoint}/deliveries"
    assert await ids(client, sandbox, one) == [d["id"] for d in every if d["endpoint_id"] == first_endpoint]
    assert await ids(client, sandbox, one + "?status=SUCCEEDED") == [done["id"]]
    assert await ids(client, sandbox, one + "?status=PENDING") == [
        d["id"] for d in every if d["endpoint_id"] == first_endpoint and d["status"] == "PENDING"
    ]
    assert await ids(client, sandbox, one + f"?payment_intent_id={second_intent}") != []
    assert await ids(client, sandbox, one + "?to=2000-01-01") == []
    refused = await client.get(one + "?endpoint_id=x", headers=sandbox.headers)
    assert refused.status_code == 400
    assert refused.json()["error"]["details"]["errors"][0]["field"] == "endpoint_id"


async def test_another_applications_endpoint_is_not_found(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, receiver: Receiver
) -> None:
    other = await new_application(runtime)
    theirs, _ = await create_endpoint(client, other, receiver.url("/other"))
    await create_intent(client, other)
    response = await client.get(f"{ALL}?endpoint_id={theirs}", headers=sandbox.headers)
    assert response.status_code == 404
    assert (await client.get(ALL, headers=sandbox.headers)).json()["items"] == []


async def test_pages_have_no_gaps_or_duplicates_while_deliveries_arrive(
    client: httpx.AsyncClient, sandbox: Sandbox, receiver: Receiver
) -> None:
    await create_endpoint(client, sandbox, receiver.url("/a"))
    for i in range(5):
        await create_intent(client, sandbox, f"order-{i}")
    before = await ids(client, sandbox, ALL)
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        body = (await client.get(ALL, params=params, headers=sandbox.headers)).json()
        seen += [item["id"] for item in body["items"]]
        await create_intent(client, sandbox, "order-new")  # a new delivery between pages
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == before and len(before) == 5


async def test_bad_cursor_of_another_list_is_400(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    response = await client.get(f"{ALL}?cursor=cGF5aV8w", headers=sandbox.headers)  # "payi_0"
    assert response.status_code == 400
    assert response.json()["error"]["details"]["errors"][0]["field"] == "cursor"
