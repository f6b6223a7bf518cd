"""HTTP of the simulator domain: both simulated providers and the controls, under /simulator."""

from fastapi import APIRouter

from payorch.simulator.provider_a.endpoints import router as provider_a_router

router = APIRouter(tags=["Simulator"])
router.include_router(provider_a_router)
