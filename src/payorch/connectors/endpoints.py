"""HTTP of the connectors domain: parse, call the service, answer."""

from fastapi import APIRouter

router = APIRouter(tags=["Connectors"])
