"""A person resolves a flagged finding, through the API (POST /v1/reports/reconciliation/findings/
{id}/resolve) and the dashboard's page for the day (plain HTTP with its CSRF forms), on SQLite
and PostgreSQL: the note is kept, a second resolve is refused, another application's finding
is not found, a bad note changes nothing; the page's button asks for the day's run."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from payorch.reconciliation.job import ReconcileDays
from payorch.runtime import Runtime
from tests.dashboard.signing import csrf_of, sign_in
from tests.kit import Sandbox, mock_sandbox
from tests.reconciliation.helpers import C, made, paid, reconcile, report, today


async def flagged_day(client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime) -> dict[str, Any]:
    """A day with one finding for a person: a refund made at provider C outside payorch."""
    intent = await paid(client, sandbox, C, 3000)
    await made(client, sandbox, provider=C, kind="refunded_at_provider", payment_intent_id=intent["id"])
    [finding] = (await reconcile(client, sandbox, runtime))["findings"]
    assert (finding["status"], finding["action"]) == ("OPEN", "FLAGGED")
    return dict(finding)


def resolve_path(finding_id: str) -> str:
    return f"/v1/reports/reconciliation/findings/{finding_id}/resolve"


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_a_finding_is_resolved_once_with_its_note(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    other = await mock_sandbox(runtime)
    finding = await flagged_day(client, sandbox, runtime)
    path = resolve_path(finding["id"])
    for bad in ({"note": ""}, {}, {"note": "x" * 1001}, {"note": "ok", "extra": 1}):
        refused = await client.post(path, json=bad, headers=sandbox.headers)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "VALIDATION_ERROR", (
            refused.text
        )
    stranger = await client.post(path, json={"note": "mine"}, headers=other.headers)
    assert stranger.status_code == 404 and stranger.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    assert (await report(client, sandbox, runtime))["findings"][0]["status"] == "OPEN"  # nothing changed
    done = await client.post(path, json={"note": "refund booked in the ledger"}, headers=sandbox.headers)
    assert done.status_code == 200, done.text
    assert (done.json()["status"], done.json()["note"]) == ("RESOLVED", "refund booked in the ledger")
    assert done.json()["resolved_at"] is not None
    again = await client.post(path, json={"note": "twice"}, headers=sandbox.headers)
    assert again.status_code == 409 and again.json()["error"]["code"] == "INVALID_STATE", again.text
    [after] = (await report(client, sandbox, runtime))["findings"]
    assert (after["status"], after["note"]) == ("RESOLVED", "refund booked in the ledger")


async def test_the_days_page_lists_what_to_look_at_and_resolves_it(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await sign_in(client, sandbox)
    day = today(runtime)
    empty = await client.get("/dashboard/reconciliation", params={"date": day})
    assert empty.status_code == 200, empty.text
    assert "This day has not been reconciled." in empty.text
    assert 'href="/dashboard/reconciliation" aria-current="page"' in empty.text
    # The page's button asks for the run; a worker carries it out.
    asked = await client.post("/dashboard/reconciliation", data={"csrf": csrf_of(empty), "date": day})
    assert asked.status_code == 303 and asked.headers["location"].endswith(f"?date={day}&notice=queued")
    while await ReconcileDays().run_once(runtime):
        pass
    assert (await report(client, sandbox, runtime))["run"]["status"] == "DONE"
    finding = await flagged_day(client, sandbox, runtime)
    page = await client.get("/dashboard/reconciliation", params={"date": day})
    assert "To look at (1)" in page.text and "Refunded at the provider outside payorch" in page.text
    assert f'href="/dashboard/payments/{finding["payment_intent_id"]}"' in page.text
    action = f"/dashboard/reconciliation/findings/{finding['id']}/resolve"
    assert f'action="{action}"' in page.text
    blank = await client.post(action, data={"csrf": csrf_of(page), "note": "  "})
    assert blank.status_code == 400  # a page saying what to fix
    forged = await client.post(action, data={"csrf": "forged", "note": "x"})
    assert forged.status_code == 403
    assert (await report(client, sandbox, runtime))["findings"][0]["status"] == "OPEN"
    resolved = await client.post(action, data={"csrf": csrf_of(page), "note": "booked"})
    assert resolved.status_code == 303 and resolved.headers["location"].endswith("notice=resolved")
    after = await client.get("/dashboard/reconciliation", params={"date": day})
    assert (
        "To look at (0)" in after.text and "Applied or resolved (1)" in after.text and "booked" in after.text
    )
    assert (await report(client, sandbox, runtime))["findings"][0]["note"] == "booked"
    bad_day = await client.get("/dashboard/reconciliation", params={"date": "2026-02-30"})
    assert bad_day.status_code == 400
