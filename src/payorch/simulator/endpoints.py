"""HTTP of the simulator domain: both simulated providers and the controls, under /simulator."""

from fastapi import APIRouter

from payorch.simulator.controls.endpoints import router as controls_router
from payorch.simulator.provider_a.endpoints import router as provider_a_router
from payorch.simulator.provider_b.endpoints import router as provider_b_router

# Two routers: the providers' wire APIs and the buyer's pages (none in the API reference), a
# payment's own requests, which the API app matches early and the in-process app serves; and
# the controls (in the reference, after the API's own operations).
providers_router = APIRouter(tags=["Simulator"])
providers_router.include_router(provider_a_router)
providers_router.include_router(provider_b_router)

controls = APIRouter(tags=["Simulator"])
controls.include_router(controls_router)
