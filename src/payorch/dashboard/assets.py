"""The dashboard's own CSS and JavaScript, served from the package (no CDN, no build step)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.dashboard.web import DashboardRoute, not_found

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

_FILES = {
    "dashboard.css": "text/css; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "passkeys.js": "text/javascript; charset=utf-8",
}
_CONTENT = {name: (Path(__file__).parent / "assets" / name).read_bytes() for name in _FILES}


@router.get("/assets/{name}")
async def asset(name: str, request: Request) -> Response:
    if name not in _FILES:
        return not_found(request)
    return Response(
        _CONTENT[name], media_type=_FILES[name], headers={"Cache-Control": "public, max-age=3600"}
    )
