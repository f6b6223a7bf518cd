"""HTTP of the simulator domain: both simulated providers and the controls, under /simulator."""

from fastapi import APIRouter

from payorch.simulator.controls.endpoints import router as controls_router
from payorch.simulator.provider_a.endpoints import router as provider_a_router
from payorch.simulator.provider_b.endpoints import router as provider_b_router

router = APIRouter(tags=["Simulator"])
router.include_router(provider_a_router)
router.include_router(provider_b_router)
router.include_router(controls_router)
