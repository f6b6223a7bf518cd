"""HTTP of the auth domain: parse, call the service, answer."""

from fastapi import APIRouter

router = APIRouter(tags=["API credentials"])
