"""HTTP of the simulator domain: parse, call the service, answer."""

from fastapi import APIRouter

router = APIRouter(tags=["Simulator"])
