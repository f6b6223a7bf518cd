"""The conformance kit's steps for holds nobody captured (payments/lapse_job.py): payorch's clock
moved to a held payment's deadlines, the simulator's hold moved by its clock control, the
hold-deadlines job's passes, and the events they sent."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from payorch.payments.lapse_job import DEADLINE_GRACE_SECONDS, HoldDeadlines
from payorch.simulator.jobs import LapseSimulatorHolds
from tests.conformance.holds import payment
from tests.conformance.kit import Shop, instant
from tests.providers.helpers import events_of


async def deadline(shop: Shop, payment_id: str) -> Any:
    return instant(str((await payment(shop, payment_id))["capture_before"]))


async def at(shop: Shop, payment_id: str, before_deadline: float) -> None:
    """payorch's (and the simulator's) clock ``before_deadline`` seconds before capture_before
    (the API shows milliseconds: 1 ms is added to be no earlier than stored)."""
    moment = (await deadline(shop, payment_id)) + timedelta(milliseconds=1)
    shop.clock.set(moment - timedelta(seconds=before_deadline))


async def at_the_end(shop: Shop, payment_id: str) -> None:
    """The moment the job first asks the provider about a hold nobody captured."""
    await at(shop, payment_id, -DEADLINE_GRACE_SECONDS)


async def passes(shop: Shop) -> None:
    """The job's passes until it finds nothing more to do now."""
    while await HoldDeadlines().run_once(shop.runtime):
        pass
    await shop.runtime.detached.drain()  # what the provider notified of the job's calls
    await its_lapses(shop)


async def its_lapses(shop: Shop) -> None:
    """A provider whose notification is its word says a hold lapsed when it lapses there (its
    own pass; payorch, asking nothing, waits for it)."""
    if shop.its_word:
        await LapseSimulatorHolds().run_once(shop.runtime)
        await shop.runtime.detached.drain()


async def move_provider_clock(shop: Shop, seconds: int) -> dict[str, Any]:
    """The simulator's clock control: the application's holds at the provider come nearer their end."""
    moved = await shop.client.post(
        "/simulator/controls/clock",
        json={"advance_seconds": seconds, "provider": shop.id},
        headers=shop.sandbox.headers,
    )
    assert moved.status_code == 200, moved.text
    return dict(moved.json())


async def events_typed(shop: Shop, intent_id: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in await events_of(shop.runtime, intent_id) if e["type"] == kind]
