"""Conformance: every hold capability a provider declares (HoldSupport: partial capture, capture
count, void, window) is exercised against its simulator, and what it does not declare is
refused by payorch (tests/conformance/capabilities.py). tests/conformance/test_planted_holds.py
shows a declaration the provider does not keep failing these steps."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

import pytest

from payorch.providers.registration import HoldSupport
from tests.conformance import capabilities
from tests.conformance.kit import Shop

STEPS: dict[str, Callable[[Shop], Awaitable[None]]] = {
    "partial_capture": capabilities.partial_capture,
    "max_captures": capabilities.captures,
    "void": capabilities.voiding,
    "window_days": capabilities.window,
}


def test_every_declared_capability_has_its_step() -> None:
    assert set(STEPS) == {f.name for f in dataclasses.fields(HoldSupport)}


@pytest.mark.parametrize("capability", list(STEPS))
async def test_each_declared_capability(shop: Shop, capability: str) -> None:
    if shop.provider.holds is None:
        pytest.skip(f"{shop.id} declares no holds")
    await STEPS[capability](shop)
