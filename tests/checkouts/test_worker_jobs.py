"""Expiry and reconciliation through the worker jobs, and a restart in the middle of a checkout;
on SQLite and PostgreSQL. Time moves with the FrozenClock."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest

from payorch.app import create_app
from payorch.checkouts.expiry_job import ExpireCheckouts
from payorch.checkouts.reconcile_processing import ReconcileProcessing
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.providers.provider_d import PROVIDER_D
from payorch.runtime import Runtime
from tests.checkouts.helpers import C, run_until_idle
from tests.databases import own_database
from tests.kit import chosen_providers, make_settings, mock_sandbox
from tests.observability.scrape import scrape, value
from tests.providers.browser import Browser
from tests.providers.helpers import (
    A,
    B,
    choose_without_returning,
    events_of,
    open_checkout,
    read,
    set_fault,
    simulated_a_status,
    start,
)

database_url = own_database  # expiry and reconciliation sweep the database: this module gets its own


async def test_unknown_commit_outcome_is_settled_by_reconciliation(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    await set_fault(client, sandbox, "provider_a_redirect_post", "error")  # the commit gets a 500
    response = await client.get(location)
    assert response.status_code == 303
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    processing = (await events_of(runtime, intent["id"]))[-1]
    assert processing["type"] == "payment.processing"
    assert processing["data"]["provider"] == "provider_a_redirect_post"

    # Not due yet: nothing happens. Still failing when due: it stays PROCESSING, retried later.
    await run_until_idle(ReconcileProcessing(), runtime)
    clock.advance(16)
    await run_until_idle(ReconcileProcessing(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"

    await set_fault(client, sandbox, "provider_a_redirect_post", "ok")
    clock.advance(31)
    await run_until_idle(ReconcileProcessing(), runtime)
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED" and read_back["payment"]["authorization_code"]
    # A late second return changes nothing more.
    assert (await client.get(location)).status_code == 303
    assert [e["type"] for e in await events_of(runtime, intent["id"])].count("payment.authorized") == 1


async def test_expiry_asks_the_provider_first(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    unpaid, _ = await start(client, sandbox)
    paid_late, paid_body = await start(client, sandbox)
    await choose_without_returning(client, paid_body, "approve")  # paid at the last second
    await run_until_idle(ExpireCheckouts(), runtime)
    assert (await read(client, sandbox, unpaid["id"]))["status"] == "REQUIRES_ACTION"  # not due yet

    clock.advance(301)  # A's token lives 5 minutes: the checkout's expires_at
    await run_until_idle(ExpireCheckouts(), runtime)
    expired = await read(client, sandbox, unpaid["id"])
    assert expired["status"] == "EXPIRED"
    assert (await events_of(runtime, unpaid["id"]))[-1] == {
        **(await events_of(runtime, unpaid["id"]))[-1],
        "type": "payment.expired",
    }
    assert (await events_of(runtime, unpaid["id"]))[-1]["data"] == {
        "payment_intent_id": unpaid["id"],
        "external_reference": unpaid["external_reference"],
        "metadata": unpaid["metadata"],
    }
    assert (await read(client, sandbox, paid_late["id"]))["status"] == "AUTHORIZED"


@pytest.mark.parametrize(
    "provider",
    chosen_providers(
        A,
        B,
        left_out={
            C: "every provider's expiry: tests/conformance/test_expiry.py",
            PROVIDER_D: "every provider's expiry: tests/conformance/test_expiry.py",
        },
    ),
)
async def test_an_expired_checkout_can_no_longer_be_paid(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, provider: str
) -> None:
    """Expiry stops the checkout at the provider before it says EXPIRED: a buyer who pays on the
    provider's page afterwards is refused there, and nothing is authorized here. The provider's
    clock runs 30 s behind ours, so only the stop (not the checkout's own end) refuses them."""
    from payorch.simulator.credentials import mock_credentials

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, provider)
    ends = datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
    clock.set(ends + timedelta(seconds=1))
    await run_until_idle(ExpireCheckouts(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "EXPIRED"

    clock.set(ends - timedelta(seconds=30))  # what the provider's clock says now
    trip = await open_checkout(client, body)
    if trip.page is not None and any(("outcome", "approve") in form.buttons for form in trip.page.forms):
        await Browser(client).press(trip.page, "outcome", "approve")  # the buyer pays anyway
    clock.set(ends + timedelta(seconds=1))
    await run_until_idle(ReconcileProcessing(), runtime)
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "EXPIRED" and read_back.get("payment") is None
    assert "payment.authorized" not in [e["type"] for e in await events_of(runtime, intent["id"])]
    if provider == B:  # and the provider took no money: it refused the payment
        token = mock_credentials(runtime.cipher, "provider_b", sandbox.application_id)["access_token"]
        found = await client.get(
            "/simulator/provider_b/v1/payments/search",
            params={"external_reference": intent["id"]},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert found.status_code == 200 and found.json()["paging"]["total"] == 0, found.text


async def test_expiry_waits_while_the_provider_is_down(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, _ = await start(client, sandbox)
    await set_fault(client, sandbox, "provider_a_redirect_post", "error")
    clock.advance(301)
    await run_until_idle(ExpireCheckouts(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    await set_fault(client, sandbox, "provider_a_redirect_post", "ok")
    clock.advance(16)
    await run_until_idle(ExpireCheckouts(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "EXPIRED"


async def test_restart_in_the_middle_of_a_checkout(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    # The process dies; a new one (new Runtime, engine, app) on the same database takes the return.
    fresh = build_runtime(make_settings(database_url))  # its own engine, closed with it
    try:
        transport = httpx.ASGITransport(app=create_app(runtime=fresh))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as other:
            response = await other.get(location)
            assert response.status_code == 303
            assert (await read(other, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    finally:
        await fresh.close()


async def test_several_workers_claim_each_checkout_once(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    import asyncio

    sandbox = await mock_sandbox(runtime)
    started = [await start(client, sandbox) for _ in range(4)]
    for _, body in started:
        await choose_without_returning(client, body, "approve")
    clock.advance(301)
    jobs = [ExpireCheckouts() for _ in range(3)]
    await asyncio.gather(*(run_until_idle(job, runtime) for job in jobs))
    for intent, _ in started:
        read_back = await read(client, sandbox, intent["id"])
        assert read_back["status"] == "AUTHORIZED"
        types = [e["type"] for e in await events_of(runtime, intent["id"])]
        assert types.count("payment.authorized") == 1


async def test_provider_b_checkout_expires(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, "provider_b_redirect_get")
    clock.advance(runtime.settings.checkout_ttl_seconds + 1)
    await run_until_idle(ExpireCheckouts(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "EXPIRED"


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.usefixtures("brisk_quick_retries")  # its notices fail under a held fault
async def test_provider_b_pending_settled_by_reconciliation_when_notifications_fail(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    from tests.providers.helpers import pay

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, "provider_b_redirect_get")
    await pay(client, body, "pending")
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    await set_fault(client, sandbox, "provider_b_redirect_get", "error")
    response = await client.post(
        "/simulator/controls/settle",
        json={"payment_intent_id": intent["id"], "outcome": "approve"},
        headers=sandbox.headers,
    )
    assert response.status_code in (200, 201, 202), response.text
    # The notification arrived but could not be confirmed (reading the payment failed).
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    await set_fault(client, sandbox, "provider_b_redirect_get", "ok")
    clock.advance(16)
    await run_until_idle(ReconcileProcessing(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"


async def test_the_worker_runs_expiry_and_reconciliation(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    import asyncio

    from payorch.worker.jobs import default_jobs
    from payorch.worker.runner import Worker

    names = {job.name for job in default_jobs()}
    assert {"checkout-expiry", "reconciliation"} <= names
    sandbox = await mock_sandbox(runtime)
    intent, _ = await start(client, sandbox)
    worker = Worker(runtime)
    task = asyncio.create_task(worker.run())
    try:
        clock.advance(301)
        worker.wake("checkout-expiry")
        for _ in range(200):
            if (await read(client, sandbox, intent["id"]))["status"] == "EXPIRED":
                break
            await asyncio.sleep(0.05)
        assert (await read(client, sandbox, intent["id"]))["status"] == "EXPIRED"
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)


async def test_crash_between_the_commit_and_the_database_write(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    """A process committed at the provider, then died before writing: its lease runs out, the
    next return commits again (422 at the provider), reads the status and authorizes once."""
    from sqlalchemy import update

    from payorch.db.tables.providers import checkouts
    from payorch.simulator.credentials import mock_credentials

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    token = body["checkout"]["fields"]["token_ws"]
    keys = mock_credentials(runtime.cipher, "provider_a", sandbox.application_id)
    committed = await client.put(
        f"/simulator/provider_a/rswebpaytransaction/api/webpay/v1.2/transactions/{token}",
        headers={"Tbk-Api-Key-Id": keys["commerce_code"], "Tbk-Api-Key-Secret": keys["api_key"]},
    )
    assert committed.status_code == 200 and committed.json()["status"] == "AUTHORIZED"
    async with runtime.database.transaction() as conn:  # the dead process's lease
        await conn.execute(
            update(checkouts)
            .where(checkouts.c.payment_intent_id == intent["id"])
            .values(lease_until=clock.now() + timedelta(seconds=25))
        )
    clock.advance(26)
    response = await client.get(location)
    assert response.status_code == 303
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED"
    types = [e["type"] for e in await events_of(runtime, intent["id"])]
    assert types.count("payment.authorized") == 1


async def test_reconciliation_commits_inside_the_window_so_the_payment_is_not_reversed(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    """The return's commit got a 500 (nothing applied at the provider): reconciliation finds the
    approval and commits it, instead of settling from status alone; after the commit window the
    provider still reads AUTHORIZED (a status-only settle would have seen it reversed)."""
    from payorch.simulator.provider_a.wire import COMMIT_WINDOW_SECONDS

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    await set_fault(client, sandbox, A, "error")
    assert (await client.get(location)).status_code == 303
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    await set_fault(client, sandbox, A, "ok")
    clock.advance(16)
    await run_until_idle(ReconcileProcessing(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    clock.advance(COMMIT_WINDOW_SECONDS + 1)
    token = body["checkout"]["fields"]["token_ws"]
    status = await simulated_a_status(client, runtime, sandbox, token)
    assert status.status_code == 200 and status.json()["status"] == "AUTHORIZED", status.text


async def test_an_approval_nobody_committed_in_time_is_never_authorized(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    """The provider was unreachable for the whole commit window: the approval was reversed, so
    reconciliation settles the intent FAILED and records no payment."""
    from payorch.simulator.provider_a.wire import COMMIT_WINDOW_SECONDS

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    await set_fault(client, sandbox, A, "error")
    assert (await client.get(location)).status_code == 303
    for _ in range(6):  # 15 s, 30 s, 1, 2, 5 min...: all inside the window, all failing
        clock.advance(COMMIT_WINDOW_SECONDS / 6)
        await run_until_idle(ReconcileProcessing(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    await set_fault(client, sandbox, A, "ok")
    clock.advance(3600)
    await run_until_idle(ReconcileProcessing(), runtime)
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "FAILED" and read_back.get("payment") is None
    assert "payment.authorized" not in [e["type"] for e in await events_of(runtime, intent["id"])]


async def test_reconciliation_stops_asking_after_seven_days(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    """Provider A's status answers 7 days after create; after that reconciliation stops asking
    and leaves the intent PROCESSING for an operator (it cannot know whether the commit that
    timed out was applied)."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    location = await choose_without_returning(client, body, "approve")
    await set_fault(client, sandbox, A, "error")
    assert (await client.get(location)).status_code == 303
    clock.advance(7 * 86400 + 1)
    token = body["checkout"]["fields"]["token_ws"]
    await set_fault(client, sandbox, A, "ok")
    gone = await simulated_a_status(client, runtime, sandbox, token)
    assert gone.status_code == 422 and "7 days" in gone.json()["error_message"]
    left_open = value(await scrape(client), "payorch_reconciliation_left_open_total", provider=A)
    assert await ReconcileProcessing().run_once(runtime) == 1  # claimed once, not asked
    clock.advance(86400)
    assert await ReconcileProcessing().run_once(runtime) == 0
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    # Counted once for the operator's alert (deploy/prometheus, PayorchReconciliationLeftOpen).
    counted = value(await scrape(client), "payorch_reconciliation_left_open_total", provider=A)
    assert counted == left_open + 1
