"""Payment links in the exports, through HTTP on SQLite and PostgreSQL: GET
/v1/exports/payment_links lists the links made in the range with what each collected (the
API's own figures), and the payments export's last column names the link a payment came from
(empty for a payment the API made). CSV and JSON lines say the same; batches of one."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from payorch.exports import service
from payorch.providers.provider_b import PROVIDER_B
from payorch.runtime import Runtime
from tests.kit import Sandbox, authorized_payment, mock_sandbox
from tests.links.helpers import LINKS, create_link, only_provider, pay_through

pytestmark = pytest.mark.settings(public_url="http://testserver")


async def both(
    client: httpx.AsyncClient, app: Sandbox, kind: str, start: datetime, end: datetime
) -> list[dict[str, Any]]:
    """The export's JSON lines, after checking its CSV has their columns and as many rows."""
    query = {"from": start.isoformat(), "to": end.isoformat()}
    lines = await client.get(f"/v1/exports/{kind}", params={**query, "format": "jsonl"}, headers=app.headers)
    table = await client.get(f"/v1/exports/{kind}", params=query, headers=app.headers)
    assert lines.status_code == table.status_code == 200, (lines.text, table.text)
    rows = [json.loads(line) for line in lines.text.splitlines()]
    [names, *cells] = list(csv.reader(io.StringIO(table.text, newline="")))
    assert len(cells) == len(rows) and all(list(row) == names for row in rows)
    return rows


async def test_links_and_the_link_of_each_payment(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "BATCH", 1)  # every row a read of its own, after the last
    sandbox = await mock_sandbox(runtime)
    await only_provider(client, sandbox, PROVIDER_B)
    start = runtime.clock.now() - timedelta(minutes=1)
    paid = await create_link(client, sandbox, max_payments=2, external_reference="=cmd", amount=2500)
    unpaid = await create_link(client, sandbox, currency="BRL", amount=15050)
    await pay_through(client, paid["url"], PROVIDER_B, "reject")
    await pay_through(client, paid["url"], PROVIDER_B)
    own = await authorized_payment(runtime, sandbox)
    end = runtime.clock.now() + timedelta(minutes=1)

    rows = await both(client, sandbox, "payment_links", start, end)
    assert [row["payment_link_id"] for row in rows] == [paid["id"], unpaid["id"]]
    for row in rows:
        read = (await client.get(f"{LINKS}/{row['payment_link_id']}", headers=sandbox.headers)).json()
        for name in ("merchant_account_id", "external_reference", "description", "status", "amount"):
            assert row[name] == read[name], name
        for name in ("currency", "max_payments", "payments_count", "amount_collected", "created_at"):
            assert row[name] == read[name], name
    assert (rows[0]["payments_count"], rows[0]["amount_collected"]) == (1, 2500)
    assert (rows[0]["amount_formatted"], rows[0]["amount_collected_formatted"]) == ("CLP 2,500", "CLP 2,500")
    assert (rows[1]["amount_formatted"], rows[1]["amount_collected"]) == ("R$150.50", 0)

    payments = await both(client, sandbox, "payments", start, end)
    assert list(payments[0])[-1] == "payment_link_id"
    by_intent = {row["payment_intent_id"]: row["payment_link_id"] for row in payments}
    assert by_intent.pop(own.intent_id) is None
    assert list(by_intent.values()) == [paid["id"]]  # the declined attempt made no payment

    other = await mock_sandbox(runtime)
    assert await both(client, other, "payment_links", start, end) == []
