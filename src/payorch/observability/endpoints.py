"""HTTP of the observability domain: parse, call the service, answer."""

from fastapi import APIRouter

router = APIRouter(tags=["Operations"])
