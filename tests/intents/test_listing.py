"""GET /v1/payment-intents through HTTP on both databases: order, paging while intents arrive,
each filter, tenancy, and the strict query."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
import pytest

from payorch.applications.records import MerchantAccount
from payorch.applications.repository import insert_merchant
from payorch.ids import new_id
from payorch.intents.records import PaymentIntent
from payorch.intents.repository import insert_intent
from payorch.runtime import Runtime
from tests.kit import Sandbox, create_intent, new_application
from tests.pages import ids

T0 = int(datetime(2026, 11, 1, tzinfo=UTC).timestamp() * 1000)  # seeded intents at T0 + i s
URL = "/v1/payment-intents"


async def seed(
    runtime: Runtime,
    app: Sandbox,
    *,
    at_ms: int,
    status: str = "CREATED",
    reference: str = "order-1",
    provider: str | None = None,
    requested: str = "auto",
    merchant: str | None = None,
) -> str:
    """An intent created at ``at_ms`` in any status (the list only reads what is stored)."""
    at = datetime.fromtimestamp(at_ms / 1000, UTC)
    intent = PaymentIntent(
        id=new_id("payi", at_ms),
        application_id=app.application_id,
        merchant_account_id=merchant or app.merchant_account_id,
        status=status,
        external_reference=reference,
        amount=1000,
        currency="CLP",
        description=None,
        requested_provider=requested,
        provider=provider,
        return_url="https://shop.example/return",
        metadata={},
        created_at=at,
        updated_at=at,
    )
    async with runtime.database.transaction() as conn:
        await insert_intent(conn, intent)
    return intent.id


async def listed(client: httpx.AsyncClient, app: Sandbox, query: str = "") -> list[str]:
    return await ids(client, app, URL + ("?" + query.lstrip("&") if query else ""))


async def test_newest_first_without_gaps_or_duplicates_while_intents_arrive(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    now_ms = int(time.time() * 1000)
    existing = [await seed(runtime, sandbox, at_ms=now_ms - 100_000 + i) for i in range(7)]
    seen: list[str] = []
    cursor = None
    while True:
        url = f"{URL}?limit=3" + (f"&cursor={cursor}" if cursor else "")
        body = (await client.get(url, headers=sandbox.headers)).json()
        seen += [item["id"] for item in body["items"]]
        # A new intent arrives between pages: newer than every page, it never shifts them.
        await create_intent(client, sandbox)
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(existing, reverse=True)
    first = (await client.get(URL, headers=sandbox.headers)).json()["items"][0]
    assert set(first) == {
        "id",
        "status",
        "merchant_account_id",
        "external_reference",
        "amount",
        "currency",
        "description",
        "provider",
        "return_url",
        "metadata",
        "capture_method",
        "created_at",
    }


async def test_each_filter(client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    other_merchant = MerchantAccount(new_id("mrc"), sandbox.application_id, "second shop", datetime.now(UTC))
    async with runtime.database.transaction() as conn:
        await insert_merchant(conn, other_merchant)
    created = await seed(runtime, sandbox, at_ms=T0)
    waiting = await seed(
        runtime, sandbox, at_ms=T0 + 1000, status="REQUIRES_ACTION", provider="provider_b_redirect"
    )
    processing = await seed(runtime, sandbox, at_ms=T0 + 2000, status="PROCESSING", reference="order-7")
    chosen = await seed(
        runtime,
        sandbox,
        at_ms=T0 + 3000,
        status="AUTHORIZED",
        provider="provider_a_redirect_post",
        merchant=other_merchant.id,
    )
    requested = await seed(runtime, sandbox, at_ms=T0 + 4000, requested="provider_a_redirect_post")

    assert await listed(client, sandbox, "&status=REQUIRES_ACTION") == [waiting]
    stuck = "&status=REQUIRES_ACTION&status=PROCESSING"
    assert await listed(client, sandbox, stuck) == [processing, waiting]
    assert await listed(client, sandbox, "&status=CREATED") == [requested, created]
    # provider as shown: the chosen one, or the requested one before a checkout
    assert await listed(client, sandbox, "&provider=provider_a_redirect_post") == [
        requested,
        chosen,
    ]
    assert await listed(client, sandbox, f"&merchant_account_id={other_merchant.id}") == [chosen]
    assert await listed(client, sandbox, "&external_reference=order-7") == [processing]
    assert await listed(client, sandbox, "&external_reference=order-") == []  # exact only
    # from inclusive, to exclusive; a date or a timestamp
    window = "&from=2026-11-01T00:00:01Z&to=2026-11-01T00:00:03Z"
    assert await listed(client, sandbox, window) == [processing, waiting]
    assert await listed(client, sandbox, "&to=2026-11-01") == []
    assert await listed(client, sandbox, "&from=2026-11-01&to=2026-11-02") == [
        requested,
        chosen,
        processing,
        waiting,
        created,
    ]
    assert await listed(client, sandbox, "&status=CREATED&from=2026-11-01T00:00:01Z") == [requested]


async def test_another_applications_intents_are_never_listed(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    mine = await seed(runtime, sandbox, at_ms=T0)
    other = await new_application(runtime)
    theirs = await seed(runtime, other, at_ms=T0 + 1, reference="order-1")
    assert await listed(client, sandbox, "&external_reference=order-1") == [mine]
    assert await listed(client, other, "&external_reference=order-1") == [theirs]
    # Their merchant is not a filter that reaches their intents.
    assert await listed(client, sandbox, f"&merchant_account_id={other.merchant_account_id}") == []


async def test_default_page_is_20(client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    for i in range(21):
        await seed(runtime, sandbox, at_ms=T0 + i)
    body = (await client.get(URL, headers=sandbox.headers)).json()
    assert len(body["items"]) == 20 and body["next_cursor"] is not None
    rest = (await client.get(f"{URL}?cursor={body['next_cursor']}", headers=sandbox.headers)).json()
    assert len(rest["items"]) == 1 and rest["next_cursor"] is None


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("status=STUCK", ["status"]),
        ("status=CREATED&status=nope", ["status"]),
        ("limit=0", ["limit"]),
        ("limit=101", ["limit"]),
        ("from=yesterday", ["from"]),
        ("to=2026-13-01", ["to"]),
        ("cursor=bm90LWEtY3Vyc29y", ["cursor"]),  # base64 of "not-a-cursor"
        ("cursor=%21%21", ["cursor"]),
        ("merchant=mrc_x", ["merchant"]),
        ("state=CREATED&limit=500", ["state", "limit"]),
    ],
)
async def test_bad_queries_are_400_naming_each_parameter(
    client: httpx.AsyncClient, sandbox: Sandbox, query: str, fields: list[str]
) -> None:
    response = await client.get(f"{URL}?{query}", headers=sandbox.headers)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert sorted(e["field"] for e in error["details"]["errors"]) == sorted(fields)
