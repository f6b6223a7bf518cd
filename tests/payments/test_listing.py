"""GET /v1/payments/{id} and the keyset-paginated list, through HTTP on both databases."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import httpx
import pytest

from payorch.runtime import Runtime
from tests.kit import Sandbox, authorized_payment, new_application
from tests.pages import walk

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
T0 = int(datetime(2026, 11, 1, tzinfo=UTC).timestamp() * 1000)  # payments at T0 + i seconds


async def test_read_payment_has_the_decided_fields(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=2500, currency="USD")
    response = await client.get(f"/v1/payments/{paid.payment_id}", headers=sandbox.headers)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        "id",
        "payment_intent_id",
        "merchant_account_id",
        "external_reference",
        "status",
        "amount",
        "refunded_amount",
        "currency",
        "provider",
        "authorization_code",
        "authorized_at",
        "created_at",
        "capture_method",
        "amount_capturable",
        "amount_captured",
        "amount_released",
        "capture_before",
        "captured_at",
        "dispute",
    }
    assert body["dispute"] is None
    assert (body["capture_method"], body["amount_captured"], body["amount_capturable"]) == ("automatic", 2500, 0)
    assert body["id"] == paid.payment_id and body["payment_intent_id"] == paid.intent_id
    assert body["status"] == "AUTHORIZED" and body["amount"] == 2500 and body["refunded_amount"] == 0
    assert body["currency"] == "USD" and body["provider"] == "provider_a_redirect_post"
    assert TIMESTAMP.match(body["authorized_at"]) and TIMESTAMP.match(body["created_at"])
    # The intent carries it as its payment.
    intent = (await client.get(f"/v1/payment-intents/{paid.intent_id}", headers=sandbox.headers)).json()
    assert intent["payment"]["id"] == paid.payment_id


async def collect(client: httpx.AsyncClient, app: Sandbox, query: str, limit: int) -> tuple[list[str], int]:
    items, pages = await walk(client, app, "/v1/payments" + ("?" + query.lstrip("&") if query else ""), limit)
    return [item["id"] for item in items], pages


async def test_pages_are_newest_first_without_gaps_or_duplicates_while_payments_arrive(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    now_ms = int(time.time() * 1000)
    existing = [
        (await authorized_payment(runtime, sandbox, at_ms=now_ms - 100_000 + i * 10)).payment_id
        for i in range(25)
    ]
    other = await new_application(runtime)
    await authorized_payment(runtime, other)  # never listed for sandbox

    seen: list[str] = []
    cursor = None
    pages = 0
    arrived: list[str] = []
    while True:
        url = "/v1/payments?limit=7" + (f"&cursor={cursor}" if cursor else "")
        body = (await client.get(url, headers=sandbox.headers)).json()
        pages += 1
        seen += [item["id"] for item in body["items"]]
        # New payments arrive between pages (newer than anything listed so far).
        arrived.append((await authorized_payment(runtime, sandbox)).payment_id)
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert pages == 4  # 7 + 7 + 7 + 4
    assert seen == sorted(existing, reverse=True), "newest first, every one exactly once"
    # A fresh listing starts with the arrivals.
    first = (await client.get("/v1/payments?limit=100", headers=sandbox.headers)).json()
    assert [i["id"] for i in first["items"]] == sorted(arrived + existing, reverse=True)
    assert first["next_cursor"] is None


async def test_status_and_time_filters(client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    made = []
    for i in range(12):
        status = "REFUNDED" if i % 3 == 0 else "AUTHORIZED"
        made.append(
            (await authorized_payment(runtime, sandbox, at_ms=T0 + i * 1000, status=status)).payment_id
        )

    refunded, pages = await collect(client, sandbox, "&status=REFUNDED", 2)
    assert refunded == [made[9], made[6], made[3], made[0]] and pages == 2

    # from inclusive, to exclusive; timestamps with zone, and dates.
    window, _ = await collect(client, sandbox, "&from=2026-11-01T00:00:03Z&to=2026-11-01T00:00:07.000Z", 3)
    assert window == [made[6], made[5], made[4], made[3]]
    window, _ = await collect(client, sandbox, "&from=2026-11-01T01:00:03%2B01:00&status=AUTHORIZED", 100)
    assert window == [m for i, m in enumerate(made) if i >= 3 and i % 3][::-1]
    day, _ = await collect(client, sandbox, "&from=2026-11-01&to=2026-11-02", 5)
    assert day == made[::-1]
    none, _ = await collect(client, sandbox, "&from=2026-11-02", 5)
    assert none == []
    assert (await client.get("/v1/payments", headers=sandbox.headers)).json()["next_cursor"] is None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=abc", "limit"),
        ("limit=-1", "limit"),
        ("status=PAID", "status"),
        ("from=yesterday", "from"),
        ("to=2026-13-01", "to"),
        ("cursor=not-a-cursor", "cursor"),
        ("cursor=cGF5X3g", "cursor"),  # base64 of "pay_x"
    ],
)
async def test_bad_query_parameters_are_400(
    client: httpx.AsyncClient, sandbox: Sandbox, query: str, field: str
) -> None:
    response = await client.get(f"/v1/payments?{query}", headers=sandbox.headers)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]["errors"][0]["field"] == field


async def test_default_page_size_is_20(client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    for i in range(21):
        await authorized_payment(runtime, sandbox, at_ms=T0 + i)
    body = (await client.get("/v1/payments", headers=sandbox.headers)).json()
    assert len(body["items"]) == 20 and body["next_cursor"] is not None
    rest = (await client.get(f"/v1/payments?cursor={body['next_cursor']}", headers=sandbox.headers)).json()
    assert len(rest["items"]) == 1 and rest["next_cursor"] is None
