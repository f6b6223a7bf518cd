"""HTTP of the observability domain: /healthz, /readyz, /metrics (no API key: keep these
paths off the public load balancer, see docs/deployment.md)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel
from starlette.responses import Response

from payorch.http.deps import runtime_of
from payorch.http.errors import problem_responses, request_id_of
from payorch.http.responses import error_response, json_response
from payorch.observability import backlog, metrics
from payorch.observability.service import NotReady, check_readiness

router = APIRouter(tags=["Operations"])
metrics.on_scrape(backlog.refresh_delivery_backlog)


class Health(BaseModel):
    status: Literal["ok"]


class ReadinessChecks(BaseModel):
    database: Literal["ok"]
    migrations: Literal["current"]


class Ready(BaseModel):
    status: Literal["ready"]
    checks: ReadinessChecks


@router.get("/healthz", response_model=Health, summary="Liveness: the process answers")
async def healthz() -> Response:
    # Touches nothing shared: a database outage must not get every replica restarted.
    return json_response({"status": "ok"})


@router.get(
    "/readyz",
    response_model=Ready,
    responses=problem_responses(NotReady),
    summary="Readiness: the database answers and its migrations are current",
)
async def readyz(request: Request) -> Response:
    phases = runtime_of(request).phases
    readiness = await check_readiness(phases)
    if not readiness.ready:
        return error_response(NotReady(details=readiness.as_dict()), request_id_of(request))
    return json_response({"status": "ready", "checks": readiness.as_dict()})


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
async def metrics_endpoint(request: Request) -> Response:
    runtime = runtime_of(request)
    await metrics.run_scrape_hooks(runtime)
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)
