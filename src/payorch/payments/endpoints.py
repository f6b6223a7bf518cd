"""HTTP of the payments domain: parse, call the service, answer."""

from fastapi import APIRouter

router = APIRouter(tags=["Payments and refunds"])
