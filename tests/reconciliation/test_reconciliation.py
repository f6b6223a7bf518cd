"""Reconciliation through HTTP on SQLite and PostgreSQL: each discrepancy made at the simulated
provider is found with both sides' values; the provider's final word (an approval nobody
returned with, a dispute nobody notified) is applied once through the normal paths, with its
events once, however often the day is reconciled and by how many workers at once; the rest is
flagged for a person; a clean day reports everything matched."""

from __future__ import annotations

import asyncio
from datetime import date

import httpx
import pytest

from payorch.providers.registry import registration_of
from payorch.reconciliation import service
from payorch.reconciliation.job import ReconcileDays
from payorch.runtime import Runtime
from tests.checkouts.helpers import _payment, control
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import A, B, events_of, pay, press_without_returning, read, start
from tests.reconciliation.helpers import C, kinds, of_provider, paid, reconcile, report, today, types


async def c_api(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, path: str, form: dict[str, str]
) -> httpx.Response:
    """Provider C's own API with the application's MOCK secret key (as its console would)."""
    key = registration_of(C).mock_credentials(runtime.cipher, sandbox.application_id)["secret_key"]
    return await client.post(
        f"/simulator/provider_c{path}", data=form, headers={"Authorization": f"Bearer {key}"}
    )


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_a_clean_day_reports_every_payment_matched(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    for provider, amount in ((A, 1500), (B, 2500), (C, 3500), (C, 100)):
        await paid(client, sandbox, provider, amount)
    body = await reconcile(client, sandbox, runtime)
    assert body["findings"] == []
    assert of_provider(body, A)["matched"] == {"count": 1, "amounts": [{"currency": "CLP", "amount": 1500}]}
    assert of_provider(body, B)["matched"] == {"count": 1, "amounts": [{"currency": "CLP", "amount": 2500}]}
    assert of_provider(body, C)["matched"] == {"count": 2, "amounts": [{"currency": "CLP", "amount": 3600}]}
    # Every other provider read its side; one without a reader (D) says so (test_not_reconciled.py).
    for listed in body["providers"]:
        read_by = registration_of(listed["provider"]).reconciliation
        assert (listed["unavailable"] is None) == (read_by is not None), listed


async def test_an_approval_with_no_return_is_applied_once_even_run_twice_and_at_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, checkout_body = await start(client, sandbox, A)
    # The buyer approves at provider A and never comes back (A sends no notifications).
    pressed = await press_without_returning(client, checkout_body, "approve")
    assert pressed.status_code in (200, 303), pressed.text
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    asked = [
        await client.post(
            "/v1/reports/reconciliation", json={"date": today(runtime)}, headers=sandbox.headers
        )
        for _ in range(2)
    ]
    assert [a.status_code for a in asked] == [202, 202]
    assert asked[0].json()["id"] == asked[1].json()["id"]  # the second request started nothing
    # Two workers at once: one takes today's run (the other finds yesterday's, queued daily).
    await asyncio.gather(ReconcileDays().run_once(runtime), ReconcileDays().run_once(runtime))
    body = await report(client, sandbox, runtime)
    assert kinds(body) == [(A, "approved_not_recorded", "APPLIED")]
    [finding] = body["findings"]
    assert finding["payment_intent_id"] == intent["id"] and finding["status"] == "RESOLVED"
    assert finding["payment_intent_url"] == f"/v1/payment-intents/{intent['id']}"
    assert finding["payorch"]["intent_status"] == "REQUIRES_ACTION"
    assert finding["at_provider"]["status"] == "AUTHORIZED" and finding["at_provider"]["amount"] == 1500
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    # The day again, and carried out by two workers at once past the run's claim: nothing more
    # moves or is said.
    await reconcile(client, sandbox, runtime)
    day = date.fromisoformat(today(runtime))
    await asyncio.gather(*(service.reconcile_day(runtime, sandbox.application_id, day) for _ in range(2)))
    again = await reconcile(client, sandbox, runtime)
    assert of_provider(again, A)["matched"]["count"] == 1
    emitted = types(await events_of(runtime, intent["id"]))
    assert emitted.count("payment.authorized") == 1
    assert emitted.count("reconciliation.discrepancy") == 1


async def test_a_refund_done_at_the_provider_is_flagged_with_both_sides(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, C, 3000)
    key = registration_of(C).mock_credentials(runtime.cipher, sandbox.application_id)["secret_key"]
    sessions = await client.get(
        "/simulator/provider_c/v1/checkout/sessions",
        params={"client_reference_id": intent["id"]},
        headers={"Authorization": f"Bearer {key}"},
    )
    pi = sessions.json()["data"][0]["payment_intent"]
    refunded = await c_api(client, runtime, sandbox, "/v1/refunds", {"payment_intent": pi, "amount": "1000"})
    assert refunded.status_code == 200, refunded.text
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(C, "refunded_outside", "FLAGGED")]
    [finding] = body["findings"]
    assert (finding["payorch"]["refunded"], finding["at_provider"]["refunded"]) == (0, 1000)
    assert finding["status"] == "OPEN"
    # Flagged, never guessed: payorch's payment is as it was.
    assert (await _payment(client, sandbox, intent["id"]))["refunded_amount"] == 0
    await reconcile(client, sandbox, runtime)
    assert types(await events_of(runtime, intent["id"])).count("reconciliation.discrepancy") == 1


async def test_an_orphan_payment_at_the_provider_is_flagged(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    made = await c_api(
        client,
        runtime,
        sandbox,
        "/v1/checkout/sessions",
        {
            "mode": "payment",
            "success_url": "https://shop.example/ok",
            "line_items[0][price_data][currency]": "clp",
            "line_items[0][price_data][unit_amount]": "4200",
            "line_items[0][price_data][product_data][name]": "console sale",
            "line_items[0][quantity]": "1",
        },
    )
    assert made.status_code == 200, made.text
    await pay(client, {"checkout": {"url": made.json()["url"], "method": "GET", "fields": {}}}, "approve")
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(C, "approved_not_recorded", "FLAGGED")]
    [finding] = body["findings"]
    assert finding["payment_intent_id"] is None and finding["payorch"] == {"known": False}
    assert finding["at_provider"]["amount"] == 4200


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.usefixtures("brisk_quick_retries")  # its notices fail under a held fault
async def test_a_dispute_nobody_notified_is_recorded_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, B)
    # The chargeback's notification arrives while payorch cannot read the provider: nothing recorded.
    await control(client, sandbox, "faults", provider=B, mode="error")
    opened = await control(client, sandbox, "settle", payment_intent_id=intent["id"], outcome="chargeback")
    assert opened.status_code == 200, opened.text
    await control(client, sandbox, "faults", provider=B, mode="ok")
    assert (await _payment(client, sandbox, intent["id"]))["dispute"] is None
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(B, "dispute_not_recorded", "APPLIED")]
    assert (await _payment(client, sandbox, intent["id"]))["dispute"]["status"] == "OPEN"
    await reconcile(client, sandbox, runtime)
    emitted = types(await events_of(runtime, intent["id"]))
    assert emitted.count("payment.disputed") == 1 and emitted.count("reconciliation.discrepancy") == 1


async def test_a_day_is_refused_when_it_is_not_a_past_day(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    for bad in ("2026-02-30", "tomorrow", "0000-00-00"):
        answer = await client.post("/v1/reports/reconciliation", json={"date": bad}, headers=sandbox.headers)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "VALIDATION_ERROR", answer.text
    # A real day still to come: not over yet, 409 (the document admits any real day).
    later = await client.post(
        "/v1/reports/reconciliation", json={"date": "9999-01-01"}, headers=sandbox.headers
    )
    assert later.status_code == 409 and later.json()["error"]["code"] == "INVALID_STATE", later.text
    missing = await client.get(
        "/v1/reports/reconciliation", params={"date": today(runtime)}, headers=sandbox.headers
    )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
