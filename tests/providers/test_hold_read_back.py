"""providers/holds.py's ``made_already``: a capture or void the provider refused is read back,
and only a hold that shows it done turns the refusal into its state."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import cast

import pytest

from payorch.providers.base import ConnectorContext
from payorch.providers.holds import HoldRef, HoldState, HoldStatus, made_already

HOLD = HoldRef("payi_1", "pi_1", "auth_1", 1000, "USD", datetime(2026, 12, 12, tzinfo=UTC))
CTX = cast(ConnectorContext, object())  # the fake below reads nothing from it


class ReadsAs:
    """Hold calls whose read answers ``state`` (and counts the reads)."""

    def __init__(self, state: HoldState) -> None:
        self.state = state
        self.reads = 0

    async def capture(self, ctx: ConnectorContext, hold: HoldRef, amount: int, key: str) -> HoldState:
        raise AssertionError("never captures again")

    async def void(self, ctx: ConnectorContext, hold: HoldRef, key: str) -> HoldState:
        raise AssertionError("never voids again")

    async def read_hold(self, ctx: ConnectorContext, hold: HoldRef) -> HoldState:
        assert (ctx, hold) == (CTX, HOLD)
        self.reads += 1
        return self.state


@pytest.mark.parametrize(
    ("state", "capture", "made"),
    [
        (HoldState(HoldStatus.CAPTURED, 600, 400), 600, True),  # the capture asked, made before
        (HoldState(HoldStatus.CAPTURED, 1000), 600, False),  # another capture: the refusal stands
        (HoldState(HoldStatus.HELD), 600, False),
        (HoldState(HoldStatus.RELEASED), 600, False),
        (HoldState(HoldStatus.RELEASED), None, True),  # the void asked, made before
        (HoldState(HoldStatus.LAPSED), None, True),  # released by the provider: as good as a void
        (HoldState(HoldStatus.HELD), None, False),
        (HoldState(HoldStatus.CAPTURED, 1000), None, False),
    ],
)
async def test_a_refused_capture_or_void_is_made_only_if_the_hold_shows_it(
    state: HoldState, capture: int | None, made: bool
) -> None:
    calls = ReadsAs(state)
    seen = await made_already(calls, CTX, HOLD, capture)
    assert seen == (state if made else None)
    assert calls.reads == 1
