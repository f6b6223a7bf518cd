"""HTTP of the simulator domain: every simulated provider and the controls, under /simulator."""

from fastapi import APIRouter

from payorch.simulator.controls.endpoints import router as controls_router
from payorch.simulator.discrepancies.endpoints import router as discrepancies_router
from payorch.simulator.market.endpoints import router as market_router
from payorch.simulator.registry import SIMULATED

# Two groups, each mounted flat (payorch.http.routing): the providers' wire APIs and the buyer's
# pages (none in the API reference), a payment's own requests, which the API app matches early
# and the in-process app serves; and the controls (in the reference, after the API's own
# operations), the shared ones first, then each provider's own.
PROVIDER_ROUTERS: tuple[APIRouter, ...] = tuple(r for s in SIMULATED for r in s.routers)
CONTROLS_ROUTERS: tuple[APIRouter, ...] = (
    controls_router,
    market_router,
    discrepancies_router,
    *(r for s in SIMULATED for r in s.controls_routers),
)
