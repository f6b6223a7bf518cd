"""Writes with the published (public) test credentials: anyone has them, so they are limited
per client address (PAYORCH_SIMULATOR_PUBLIC_RATE_LIMIT), answered in the provider's own style."""

from __future__ import annotations

import logging

from fastapi import Request
from starlette.responses import Response

from payorch.http.responses import json_response
from payorch.jsontypes import JsonObject
from payorch.ratelimit.limiter import client_address
from payorch.runtime import Runtime

log = logging.getLogger("payorch.simulator")


async def public_write_refused(
    request: Request, runtime: Runtime, too_many: JsonObject
) -> Response | None:
    """A 429 with ``too_many`` (the provider's error body) once this address used up its budget
    of public writes; None while it may go on."""
    try:
        decision = await runtime.rate_limiter.hit_public_simulator(client_address(request.scope))
    except Exception:  # the limiter's storage is down: serve, as the API's middleware does
        log.exception("rate limiter unavailable; public simulator write not counted")
        return None
    if decision.allowed:
        return None
    return json_response(too_many, 429, {"Retry-After": str(decision.reset_seconds)})
