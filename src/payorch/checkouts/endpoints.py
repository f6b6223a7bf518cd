"""HTTP of the checkouts domain: parse, call the service, answer."""

from fastapi import APIRouter

router = APIRouter(tags=["Checkout"])
