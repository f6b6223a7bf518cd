"""HTTP of the events domain: parse, call the service, answer."""

from fastapi import APIRouter

router = APIRouter(tags=["Events"])
