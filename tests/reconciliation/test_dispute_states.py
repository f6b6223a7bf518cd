"""Reconciliation compares each payment's dispute with the provider's, through HTTP on SQLite and
PostgreSQL, for providers B and C: a dispute whose notices never got through (payorch could not
read the provider while they arrived) is found and repaired through the disputes path with the
provider's read, once, whatever its state; a provider read older than what payorch holds is
flagged for a person and changes nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from payorch.payments import repository as payments
from payorch.runtime import Runtime
from tests.checkouts.helpers import _payment, control, settled
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import B, events_of
from tests.reconciliation.helpers import C, kinds, paid, reconcile, types

pytestmark = [
    pytest.mark.slow,  # each test pays and moves disputes at the simulator: seconds
    # Its notices fail under a fault held for the whole request that sent them (``unheard``).
    pytest.mark.usefixtures("brisk_quick_retries"),
]


async def unheard(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, provider: str, outcome: str
) -> None:
    """The provider moves the dispute while payorch cannot read it: the notice changes nothing."""
    await control(client, sandbox, "faults", provider=provider, mode="error")
    await settled(client, sandbox, intent_id, outcome, provider)
    await control(client, sandbox, "faults", provider=provider, mode="ok")


def disputes_emitted(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(e["type"], e["data"].get("outcome")) for e in events if e["type"].startswith("payment.dispute")]


@pytest.mark.parametrize(
    ("provider", "opening", "ending", "status"),
    [
        (C, "chargeback", "chargeback_lost", "LOST"),
        (C, "chargeback", "chargeback_won", "WON"),
        (B, "chargeback", "chargeback_lost", "LOST"),
        (B, "mediation", "mediation_won", "WON"),  # B shows it paid again: the open one ends won
    ],
)
async def test_an_end_nobody_heard_of_is_applied_once(
    client: httpx.AsyncClient, runtime: Runtime, provider: str, opening: str, ending: str, status: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, provider)
    await settled(client, sandbox, intent["id"], opening, provider)
    assert (await _payment(client, sandbox, intent["id"]))["dispute"]["status"] == "OPEN"
    await unheard(client, sandbox, intent["id"], provider, ending)
    assert (await _payment(client, sandbox, intent["id"]))["dispute"]["status"] == "OPEN"

    body = await reconcile(client, sandbox, runtime)
    found = [f for f in body["findings"] if f["kind"].startswith("dispute")]
    assert [(f["kind"], f["action"], f["status"]) for f in found] == [
        ("dispute_mismatch", "APPLIED", "RESOLVED")
    ]
    assert found[0]["payorch"]["dispute_status"] == "OPEN" and found[0]["at_provider"]["dispute"] == status
    assert (await _payment(client, sandbox, intent["id"]))["dispute"]["status"] == status

    await reconcile(client, sandbox, runtime)  # again: nothing more
    emitted = await events_of(runtime, intent["id"])
    assert disputes_emitted(emitted) == [
        ("payment.disputed", None),
        ("payment.dispute_closed", status.lower()),
    ]
    assert types(emitted).count("reconciliation.discrepancy") == len(body["findings"])


async def test_a_chargeback_at_c_nobody_heard_of_is_recorded(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Provider C's disputes were not read by reconciliation before: one whose every event failed
    (opened, then lost) is recorded with both its opening and its end."""
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, C)
    await unheard(client, sandbox, intent["id"], C, "chargeback")
    await unheard(client, sandbox, intent["id"], C, "chargeback_lost")
    assert (await _payment(client, sandbox, intent["id"]))["dispute"] is None
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(C, "dispute_not_recorded", "APPLIED")]
    assert body["findings"][0]["at_provider"]["dispute"] == "LOST"
    dispute = (await _payment(client, sandbox, intent["id"]))["dispute"]
    assert dispute["status"] == "LOST" and dispute["kind"] == "chargeback"
    emitted = await events_of(runtime, intent["id"])
    assert disputes_emitted(emitted) == [("payment.disputed", None), ("payment.dispute_closed", "lost")]


async def test_a_provider_read_older_than_payorchs_is_flagged_and_changes_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """payorch holds a dispute read newer than what the provider's list shows (its list lags): the
    disputes path refuses the older read, and the finding is left for a person."""
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, B)
    await settled(client, sandbox, intent["id"], "chargeback", B)
    await unheard(client, sandbox, intent["id"], B, "chargeback_lost")
    payment = await _payment(client, sandbox, intent["id"])
    later = runtime.clock.now() + timedelta(days=1)
    async with runtime.database.transaction() as conn:
        await payments.set_dispute_order(conn, payment["id"], None, later, 9)
    body = await reconcile(client, sandbox, runtime)
    found = [f for f in body["findings"] if f["kind"].startswith("dispute")]
    assert [(f["kind"], f["action"], f["status"]) for f in found] == [("dispute_mismatch", "FLAGGED", "OPEN")]
    assert (await _payment(client, sandbox, intent["id"]))["dispute"]["status"] == "OPEN"
    assert disputes_emitted(await events_of(runtime, intent["id"])) == [("payment.disputed", None)]
