"""HTTP of the webhooks domain: parse, call the service, answer."""

from fastapi import APIRouter

router = APIRouter(tags=["Webhooks"])
