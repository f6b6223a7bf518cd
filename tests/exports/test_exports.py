"""GET /v1/exports/{payments|refunds|disputes|balances} through HTTP on SQLite and PostgreSQL:
every column checked against the API's own reads, the balances' totals against the payments,
refunds and disputes the API lists, the formula guard, CSV and JSON lines read back exactly."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.exports import service
from payorch.payments import repository as payments
from payorch.providers.provider_b import PROVIDER_B
from payorch.runtime import Runtime
from tests.kit import Paid, Sandbox, assert_error, authorized_payment, new_application
from tests.pages import walk
from tests.payments import fakes
from tests.payments.fakes import FakeGateway

HYPERLINK = '=HYPERLINK("http://x","y")'
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def at(moment: datetime) -> str:
    return quote(moment.isoformat())


def ms(runtime: Runtime) -> int:
    """The clock's time as an id's: rows made now are created when their id says."""
    return int(runtime.clock.now().timestamp() * 1000)


async def export(
    client: httpx.AsyncClient, app: Sandbox, kind: str, start: datetime, end: datetime, fmt: str
) -> httpx.Response:
    url = f"/v1/exports/{kind}?from={at(start)}&to={at(end)}&format={fmt}"
    response = await client.get(url, headers=app.headers)
    assert response.status_code == 200, response.text
    return response


def jsonl(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.headers["content-type"] == "application/x-ndjson"
    return [json.loads(line) for line in response.text.splitlines()]


def unguarded(cell: str) -> str:
    """The documented way back from a guarded CSV cell: drop one leading quote."""
    return cell[1:] if cell.startswith("'") else cell


def as_csv_cell(value: object) -> str:
    return "" if value is None else str(value)


async def both(
    client: httpx.AsyncClient, app: Sandbox, kind: str, start: datetime, end: datetime
) -> list[dict[str, Any]]:
    """The export as JSON lines, after checking the CSV says exactly the same (but the guard)."""
    rows = jsonl(await export(client, app, kind, start, end, "jsonl"))
    response = await export(client, app, kind, start, end, "csv")
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"].startswith(f'attachment; filename="payorch-{kind}-')
    table = list(csv.reader(io.StringIO(response.text, newline="")))
    names = table[0]
    assert [list(row) for row in rows] == [names] * len(rows)
    assert len(table) == len(rows) + 1
    for row, cells in zip(rows, table[1:], strict=True):
        for (name, value), cell in zip(row.items(), cells, strict=True):
            if isinstance(value, str):
                # Guarded exactly when a spreadsheet would run it (or it starts with the guard).
                assert cell.startswith("'") == value.startswith((*FORMULA_START, "'")), (name, cell)
                assert unguarded(cell) == value, name
            else:
                assert cell == as_csv_cell(value), name  # numbers as digits, null as empty
    return rows


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Batches of 2: every export below takes several reads, each after the last one's position.
    monkeypatch.setattr(service, "BATCH", 2)


async def test_payments_refunds_disputes_and_balances_match_the_api(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: FrozenClock,
    sandbox: Sandbox,
    gateway: FakeGateway,
    small_batches: None,
) -> None:
    day_one = runtime.clock.now()
    start, end = day_one - timedelta(hours=1), day_one + timedelta(days=2)
    made: list[Paid] = [
        await authorized_payment(runtime, sandbox, amount=1500, at_ms=ms(runtime)),
        await authorized_payment(
            runtime,
            sandbox,
            amount=2500,
            currency="USD",
            provider=PROVIDER_B,
            at_ms=ms(runtime) + 1,
            external_reference=HYPERLINK,
        ),
        await authorized_payment(
            runtime,
            sandbox,
            amount=1000,
            currency="USD",
            provider=PROVIDER_B,
            at_ms=ms(runtime) + 2,
            external_reference="'-2 quoted",
        ),
    ]
    other = await new_application(runtime)
    await authorized_payment(runtime, other, at_ms=ms(runtime) + 3)  # never in sandbox's exports
    refunded = await client.post(
        f"/v1/payments/{made[1].payment_id}/refunds",
        json={"amount": 500, "reason": "+1 damaged\tbox"},
        headers=sandbox.headers,
    )
    assert refunded.status_code == 201, refunded.text
    gateway.mode = fakes.REJECT
    failed = await client.post(f"/v1/payments/{made[2].payment_id}/refunds", headers=sandbox.headers)
    assert failed.status_code == 502, failed.text  # the refund is recorded FAILED
    async with runtime.database.transaction() as conn:
        await payments.set_dispute(conn, made[0].payment_id, "OPEN", "chargeback", disputed_at=day_one)
    # The next day: one more payment, won, and a dispute lost on a payment of the day before.
    clock.advance(86400)
    day_two = runtime.clock.now()
    made.append(
        await authorized_payment(
            runtime,
            sandbox,
            amount=700,
            currency="USD",
            provider=PROVIDER_B,
            at_ms=ms(runtime),
            external_reference="@SUM(1)",
        )
    )
    async with runtime.database.transaction() as conn:
        await payments.set_dispute(conn, made[2].payment_id, "OPEN", "mediation", disputed_at=day_two)
        await payments.set_dispute(conn, made[2].payment_id, "LOST", "mediation", closed_at=day_two)
        # Won: the money came back, the balance does not count it.
        await payments.set_dispute(conn, made[3].payment_id, "OPEN", "chargeback", disputed_at=day_two)
        await payments.set_dispute(conn, made[3].payment_id, "WON", "chargeback", closed_at=day_two)

    # Payments: what GET /v1/payments lists for the same range, oldest first, every field.
    listed, _ = await walk(client, sandbox, f"/v1/payments?from={at(start)}&to={at(end)}", 100)
    rows = await both(client, sandbox, "payments", start, end)
    assert [row["payment_id"] for row in rows] == [p["id"] for p in reversed(listed)]
    assert [row["payment_id"] for row in rows] == [p.payment_id for p in made]
    for row, api in zip(rows, reversed(listed), strict=True):
        for name in (
            "payment_intent_id",
            "external_reference",
            "merchant_account_id",
            "provider",
            "status",
            "amount",
            "refunded_amount",
            "currency",
            "authorization_code",
            "authorized_at",
            "created_at",
        ):
            assert row[name] == api[name], name
        assert row["provider_reference"] == "tok-" + row["payment_intent_id"][-10:]
    assert rows[1]["external_reference"] == HYPERLINK
    assert [row["amount_formatted"] for row in rows] == ["CLP 1,500", "$25.00", "$10.00", "$7.00"]

    # Refunds: each as GET /v1/payments/{id}/refunds reads it.
    api_refunds = [
        refund
        for paid in made
        for refund in (
            await client.get(f"/v1/payments/{paid.payment_id}/refunds", headers=sandbox.headers)
        ).json()["items"]
    ]
    rows = await both(client, sandbox, "refunds", start, end)
    assert sorted(row["refund_id"] for row in rows) == sorted(r["refund_id"] for r in api_refunds)
    by_id = {refund["refund_id"]: refund for refund in api_refunds}
    for row in rows:
        api = by_id[row["refund_id"]]
        for name in (
            "payment_id",
            "payment_intent_id",
            "status",
            "amount",
            "currency",
            "reason",
            "failure_reason",
            "created_at",
        ):
            assert row[name] == api[name], name
        payment = next(p for p in listed if p["id"] == row["payment_id"])
        assert (row["external_reference"], row["merchant_account_id"], row["provider"]) == (
            payment["external_reference"],
            payment["merchant_account_id"],
            payment["provider"],
        )
    assert {(row["status"], row["provider_reference"]) for row in rows} == {
        ("SUCCEEDED", "prv-" + refunded.json()["refund_id"]),
        ("FAILED", None),
    }

    # Disputes: each as the payment reads it.
    rows = await both(client, sandbox, "disputes", start, end)
    assert [row["payment_id"] for row in rows] == [made[0].payment_id, made[2].payment_id, made[3].payment_id]
    assert [row["status"] for row in rows] == ["OPEN", "LOST", "WON"]
    for row in rows:
        api = (await client.get(f"/v1/payments/{row['payment_id']}", headers=sandbox.headers)).json()
        assert (row["status"], row["kind"], row["disputed_at"], row["closed_at"]) == (
            api["dispute"]["status"],
            api["dispute"]["kind"],
            api["dispute"]["disputed_at"],
            api["dispute"]["closed_at"],
        )
        assert (row["amount"], row["currency"], row["external_reference"]) == (
            api["amount"],
            api["currency"],
            api["external_reference"],
        )

    # Balances: the totals of what the API lists, per UTC day, currency and provider.
    expected: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for payment in listed:
        expected[(payment["created_at"][:10], payment["currency"], payment["provider"])][0] += payment[
            "amount"
        ]
        dispute = payment["dispute"]
        if dispute is not None and dispute["status"] != "WON":
            key = (dispute["disputed_at"][:10], payment["currency"], payment["provider"])
            expected[key][2 if dispute["status"] == "OPEN" else 3] += payment["amount"]
    for refund in api_refunds:
        if refund["status"] == "SUCCEEDED":
            payment = next(p for p in listed if p["id"] == refund["payment_id"])
            expected[(refund["created_at"][:10], refund["currency"], payment["provider"])][1] += refund[
                "amount"
            ]
    rows = await both(client, sandbox, "balances", start, end)
    assert {
        (r["day"], r["currency"], r["provider"]): [
            r["authorized"],
            r["refunded"],
            r["disputed_held"],
            r["disputed_lost"],
        ]
        for r in rows
    } == expected
    assert all(r["disputed"] == r["disputed_held"] + r["disputed_lost"] for r in rows)
    assert all(r["net"] == r["authorized"] - r["refunded"] - r["disputed"] for r in rows)
    day_two_usd = next(r for r in rows if r["day"] == f"{day_two:%Y-%m-%d}" and r["currency"] == "USD")
    assert (day_two_usd["net"], day_two_usd["net_formatted"]) == (-300, "-$3.00")


async def test_a_formula_comes_out_inert_and_a_negative_amount_stays_a_number(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    now = runtime.clock.now()
    paid = await authorized_payment(
        runtime, sandbox, amount=900, currency="USD", at_ms=ms(runtime), external_reference=HYPERLINK
    )
    async with runtime.database.transaction() as conn:
        await payments.set_dispute(conn, paid.payment_id, "LOST", "chargeback", disputed_at=now)
    start, end = now - timedelta(minutes=1), now + timedelta(minutes=1)

    text = (await export(client, sandbox, "payments", start, end, "csv")).text
    header, row = list(csv.reader(io.StringIO(text, newline="")))
    cell = row[header.index("external_reference")]
    assert cell == "'" + HYPERLINK, "a spreadsheet shows it as text, it does not run it"
    assert f"'{HYPERLINK}".replace('"', '""') in text  # the csv module's quoting, nothing else

    text = (await export(client, sandbox, "balances", start, end, "csv")).text
    header, row = list(csv.reader(io.StringIO(text, newline="")))
    assert row[header.index("disputed")] == "900" and row[header.index("net")] == "0"
    assert row[header.index("net_formatted")] == "$0.00"


async def test_a_negative_net_is_a_plain_number_in_csv(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    earlier = runtime.clock.now() - timedelta(days=1)
    paid = await authorized_payment(
        runtime, sandbox, amount=1234, currency="USD", at_ms=int(earlier.timestamp() * 1000)
    )
    now = runtime.clock.now()
    async with runtime.database.transaction() as conn:
        await payments.set_dispute(conn, paid.payment_id, "OPEN", "chargeback", disputed_at=now)
    start, end = now - timedelta(minutes=1), now + timedelta(minutes=1)
    text = (await export(client, sandbox, "balances", start, end, "csv")).text
    header, row = list(csv.reader(io.StringIO(text, newline="")))
    assert row[header.index("net")] == "-1234", "an integer column is never guarded"
    assert row[header.index("net_formatted")] == "'-$12.34", "a text column is, by the one rule"


async def test_an_empty_range_is_a_header_alone(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    start = datetime(2020, 1, 1, tzinfo=UTC)
    for kind in ("payments", "refunds", "disputes", "balances"):
        csv_text = (await export(client, sandbox, kind, start, start + timedelta(days=1), "csv")).text
        assert csv_text.count("\r\n") == 1 and csv_text.endswith("\r\n")
        assert (await export(client, sandbox, kind, start, start + timedelta(days=1), "jsonl")).text == ""
        # `to` at or before `from`: an empty range, as the lists read it (not a 400 the
        # document could not state).
        for end in (start, start - timedelta(hours=1)):
            assert (await export(client, sandbox, kind, start, end, "csv")).text.count("\r\n") == 1


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("to=2026-11-02", ["from"]),
        ("from=2026-11-01", ["to"]),
        ("", ["from", "to"]),
        ("from=2026-11-01&to=2026-11-02&format=xlsx", ["format"]),
        ("from=2026-11-01&to=2026-11-02&limit=5", ["limit"]),
        ("from=2026-11-01&to=2026-11-02&cursor=pay_x", ["cursor"]),
        ("from=yesterday&to=2026-11-02", ["from"]),
        ("from=2026-11-01&to=2026-13-01", ["to"]),
    ],
)
@pytest.mark.parametrize("kind", ["payments", "refunds", "disputes", "balances"])
async def test_bad_parameters_are_400_naming_them(
    client: httpx.AsyncClient, sandbox: Sandbox, kind: str, query: str, fields: list[str]
) -> None:
    error = assert_error(
        await client.get(f"/v1/exports/{kind}?{query}", headers=sandbox.headers), 400, "VALIDATION_ERROR"
    )
    details = error["details"]
    assert isinstance(details, dict)
    assert sorted(e["field"] for e in details["errors"]) == fields


async def test_an_unknown_export_is_404_and_a_missing_key_401(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    query = "from=2026-11-01&to=2026-11-02"
    assert_error(
        await client.get(f"/v1/exports/chargebacks?{query}", headers=sandbox.headers),
        404,
        "RESOURCE_NOT_FOUND",
    )
    assert_error(await client.get(f"/v1/exports/payments?{query}"), 401, "AUTHENTICATION_FAILED")
