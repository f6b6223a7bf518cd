"""The dashboard's Exports page over plain HTTP (SQLite, PostgreSQL): the form, its download
(the API's export of the signed-in application, as an attachment), a bad range as a page."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import httpx

from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, authorized_payment, new_application


async def test_the_form_downloads_the_signed_in_applications_export(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    await sign_in(client, sandbox)
    page = await client.get("/dashboard/exports")
    assert page.status_code == 200, page.text
    for field in (
        'name="kind"',
        'name="from"',
        'name="to"',
        'name="format"',
        'action="/dashboard/exports/download"',
    ):
        assert field in page.text
    assert 'href="/dashboard/exports" aria-current="page"' in page.text
    now = runtime.clock.now()
    paid = await authorized_payment(runtime, sandbox, amount=2500, currency="USD", external_reference="-1")
    await authorized_payment(runtime, await new_application(runtime))  # another application's
    query = {
        "kind": "payments",
        "from": (now - timedelta(minutes=1)).isoformat(),
        "to": (now + timedelta(minutes=1)).isoformat(),
        "format": "csv",
    }
    download = await client.get("/dashboard/exports/download", params=query)
    assert download.status_code == 200, download.text
    assert download.headers["content-disposition"].startswith('attachment; filename="payorch-payments-')
    assert download.headers["cache-control"] == "no-store"
    header, row = list(csv.reader(io.StringIO(download.text, newline="")))
    assert (row[header.index("payment_id")], row[header.index("external_reference")]) == (
        paid.payment_id,
        "'-1",
    )
    assert row[header.index("amount_formatted")] == "$25.00"


async def test_a_bad_range_is_a_page_saying_what_to_fix(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    await sign_in(client, sandbox)
    query = {"kind": "payments", "from": "2026-11-02", "to": "2026-11-01", "format": "csv"}
    page = await client.get("/dashboard/exports/download", params=query)
    assert page.status_code == 400 and "must be after from" in page.text
    page = await client.get("/dashboard/exports/download", params={**query, "kind": "everything", "to": "x"})
    assert page.status_code == 400 and "kind" in page.text and "to" in page.text
    # A field given twice is not read as its last value.
    twice = "kind=payments&from=2026-11-01&to=2026-11-02&format=csv&format=jsonl"
    page = await client.get(f"/dashboard/exports/download?{twice}")
    assert page.status_code == 400 and "format" in page.text and "takes one value" in page.text


async def test_signed_out_the_download_goes_to_sign_in(client: httpx.AsyncClient) -> None:
    answer = await client.get("/dashboard/exports/download?kind=payments&from=2026-11-01&to=2026-11-02")
    assert answer.status_code == 303 and answer.headers["location"] == "/dashboard/sign-in"
