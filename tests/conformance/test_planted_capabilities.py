"""The kit's hold capability steps (tests/conformance/capabilities.py) fail a provider that
declares what it does not do (Hyperswitch #14350): provider A planted, in this module only, with
a window it does not keep, more captures than it takes, a void that releases nothing, and a
partial capture that takes the whole hold. Unplanted, the same steps pass."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

import pytest

from payorch.providers.base import ConnectorContext
from payorch.providers.holds import HoldCalls, HoldRef, HoldState, HoldStatus
from payorch.providers.provider_a.registration import REGISTRATION as A
from payorch.providers.registration import ProviderRegistration
from tests.conformance import capabilities
from tests.conformance.kit import Shop
from tests.conformance.planted import use_planted

assert A.holds is not None and A.hold_calls is not None
REAL: HoldCalls = A.hold_calls


@dataclasses.dataclass(frozen=True)
class BrokenCalls:
    """A's own hold calls, but for the one planted as broken."""

    whole_capture: bool = False  # every capture takes the whole hold
    void_does_nothing: bool = False  # a void answers released and calls nothing

    async def capture(self, ctx: ConnectorContext, hold: HoldRef, amount: int, key: str) -> HoldState:
        return await REAL.capture(ctx, hold, hold.amount if self.whole_capture else amount, key)

    async def void(self, ctx: ConnectorContext, hold: HoldRef, key: str) -> HoldState:
        if self.void_does_nothing:
            return HoldState(HoldStatus.RELEASED, amount_released=hold.amount)
        return await REAL.void(ctx, hold, key)

    async def read_hold(self, ctx: ConnectorContext, hold: HoldRef) -> HoldState:
        return await REAL.read_hold(ctx, hold)


assert A.holds is not None
PLANTS: dict[str, tuple[ProviderRegistration, Callable[[Shop], Awaitable[None]]]] = {
    "window_not_kept": (
        dataclasses.replace(A, holds=dataclasses.replace(A.holds, window_days=3)),
        capabilities.window,
    ),
    "more_captures_than_taken": (
        dataclasses.replace(A, holds=dataclasses.replace(A.holds, max_captures=2)),
        capabilities.captures,
    ),
    "void_releasing_nothing": (
        dataclasses.replace(A, hold_calls=BrokenCalls(void_does_nothing=True)),
        capabilities.voiding,
    ),
    "partial_capture_taking_the_whole": (
        dataclasses.replace(A, hold_calls=BrokenCalls(whole_capture=True)),
        capabilities.partial_capture,
    ),
}


@pytest.fixture
def provider() -> ProviderRegistration:
    return A  # each test plants its declaration before the first call


@pytest.mark.parametrize("plant", list(PLANTS))
async def test_a_declaration_not_kept_fails_the_kit(
    shop: Shop, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    planted, step = PLANTS[plant]
    use_planted(monkeypatch, planted, shop)  # the kit reads the declaration from the shop's
    with pytest.raises(AssertionError):
        await step(shop)


@pytest.mark.parametrize("plant", list(PLANTS))
async def test_unplanted_the_same_step_passes(shop: Shop, plant: str) -> None:
    await PLANTS[plant][1](shop)
