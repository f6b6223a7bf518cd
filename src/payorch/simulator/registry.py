"""The providers the simulator serves: one registration line each (docs/providers.md)."""

from __future__ import annotations

from payorch.simulator.provider_a.simulated import SIMULATED as SIMULATED_A
from payorch.simulator.provider_b.simulated import SIMULATED as SIMULATED_B
from payorch.simulator.provider_c.simulated import SIMULATED as SIMULATED_C
from payorch.simulator.provider_d.simulated import SIMULATED as SIMULATED_D
from payorch.simulator.simulated import SimulatedProvider

SIMULATED: tuple[SimulatedProvider, ...] = (SIMULATED_A, SIMULATED_B, SIMULATED_C, SIMULATED_D)

# A provider as the controls accept it: by its id or by the simulator's name for it.
BY_NAME = {
    **{s.provider_id: s for s in SIMULATED},
    **{s.name: s for s in SIMULATED},
}
