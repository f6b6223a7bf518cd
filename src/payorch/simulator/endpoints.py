"""HTTP of the simulator domain: both simulated providers and the controls, under /simulator."""

from fastapi import APIRouter

from payorch.simulator.controls.endpoints import router as controls_router
from payorch.simulator.provider_a import page as provider_a_page
from payorch.simulator.provider_a.endpoints import router as provider_a_router
from payorch.simulator.provider_b import page as provider_b_page
from payorch.simulator.provider_b.endpoints import router as provider_b_router

# Two groups, each mounted flat (payorch.http.routing): the providers' wire APIs and the buyer's
# pages (none in the API reference), a payment's own requests, which the API app matches early
# and the in-process app serves; and the controls (in the reference, after the API's own
# operations).
PROVIDER_ROUTERS: tuple[APIRouter, ...] = (
    provider_a_page.router,
    provider_a_router,
    provider_b_page.router,
    provider_b_router,
)
CONTROLS_ROUTERS: tuple[APIRouter, ...] = (controls_router,)
