"""Each provider's declared holds (ProviderRegistration.holds) agree with its simulator: a
provider that declares holds is one the simulator holds for (SimulatedProvider.holds, the clock
control), with the declared window; one that declares none has nothing there."""

from __future__ import annotations

import pytest

from payorch.providers.provider_a.registration import REGISTRATION as A
from payorch.providers.provider_b.registration import REGISTRATION as B
from payorch.providers.provider_c.registration import REGISTRATION as C
from payorch.providers.registration import HoldSupport
from payorch.simulator.registry import SIMULATED
from payorch.simulator.simulated import SimulatedProvider


def test_a_and_c_declare_one_capture_partial_or_whole_void_and_seven_days_b_none() -> None:
    assert B.holds is None
    assert A.holds == C.holds == HoldSupport(partial_capture=True, max_captures=1, void=True, window_days=7)


@pytest.mark.parametrize("simulated", SIMULATED, ids=lambda s: s.provider_id)
def test_the_simulator_holds_exactly_where_the_provider_declares_it_with_its_window(
    simulated: SimulatedProvider,
) -> None:
    declared = simulated.registration.holds
    assert (declared is not None) == (simulated.holds is not None)
    if declared is not None and simulated.holds is not None:
        assert declared.window_days == simulated.holds.window_days


def test_a_declaration_is_refused_without_a_capture_or_a_window() -> None:
    with pytest.raises(ValueError, match="at least once"):
        HoldSupport(partial_capture=False, max_captures=0, void=True, window_days=7)
    with pytest.raises(ValueError, match="at least a day"):
        HoldSupport(partial_capture=False, max_captures=1, void=True, window_days=0)
