"""HTTP of routing: a merchant's rules (read, replace, versions: drafts and activate) and the dry
run of any version."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from payorch.errors import (
    AuthenticationFailed,
    ConnectorNotConfigured,
    CurrencyNotSupported,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.http.deps import Conn, CurrentCaller, ReadConn, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.listing import NoQuery, list_route
from payorch.http.responses import json_response
from payorch.routing import service
from payorch.routing.evaluate import evaluate
from payorch.routing.program import RoutingProgram
from payorch.routing.schemas import (
    MAX_VERSION,
    EvaluateRouting,
    Evaluation,
    NewRoutingVersion,
    RoutingVersionList,
    RoutingVersionResponse,
    VersionListQuery,
    version_body,
)

router = APIRouter(tags=["Routing"])

BASE = "/v1/admin/merchant-accounts/{merchant_id}/routing"
VersionNumber = Annotated[int, Path(ge=1, le=MAX_VERSION, description="The version's number.")]


@router.get(
    BASE,
    response_model=RoutingVersionResponse,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound),
    summary="Read a merchant's active routing version",
    description="`version` null: no rules were ever saved, and `auto` follows the connectors' priority.",
)
async def read_routing(
    merchant_id: str, caller: CurrentCaller, conn: ReadConn, query: Annotated[NoQuery, Query()]
) -> Response:
    return json_response(version_body(await service.read(conn, caller, merchant_id)))


@router.put(
    BASE,
    response_model=RoutingVersionResponse,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound),
    summary="Replace a merchant's routing rules: a new version, active at once",
    description="Checked first (docs/routing.md, Checks): each problem is a 400 naming its rule.",
)
async def replace_routing(
    merchant_id: str, body: RoutingProgram, caller: CurrentCaller, conn: Conn, request: Request
) -> Response:
    saved = await service.save_version(conn, runtime_of(request).clock, caller, merchant_id, body)
    return json_response(version_body(saved))


@list_route(
    router,
    BASE + "/versions",
    model=RoutingVersionList,
    summary="List a merchant's routing versions, newest first",
    also=(ResourceNotFound,),
)
async def list_routing_versions(
    merchant_id: str, caller: CurrentCaller, conn: ReadConn, query: Annotated[VersionListQuery, Query()]
) -> Response:
    page = await service.versions(conn, caller, merchant_id, query.cursor, query.limit)
    return json_response({"items": [version_body(v) for v in page.items], "next_cursor": page.next_cursor})


@router.post(
    BASE + "/versions",
    status_code=201,
    response_model=RoutingVersionResponse,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound),
    summary="Save a routing program as a new version: a draft unless `activate` is true",
    description="Checked first, as PUT. A draft changes no checkout: dry-run it (`POST .../evaluate` "
    "with its `version`), then `POST .../versions/{number}/activate`.",
)
async def create_routing_version(
    merchant_id: str, body: NewRoutingVersion, caller: CurrentCaller, conn: Conn, request: Request
) -> Response:
    clock = runtime_of(request).clock
    saved = await service.save_version(
        conn, clock, caller, merchant_id, body.program(), activate=body.activate
    )
    return json_response(version_body(saved), status=201)


@router.post(
    BASE + "/versions/{number}/activate",
    response_model=RoutingVersionResponse,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound),
    summary="Make a routing version active: a draft, or an earlier one again",
    description="Checked again against the merchant's connectors as they are now.",
)
async def activate_routing_version(
    merchant_id: str, number: VersionNumber, caller: CurrentCaller, conn: Conn, request: Request
) -> Response:
    activated = await service.activate(conn, runtime_of(request).clock, caller, merchant_id, number)
    return json_response(version_body(activated))


@router.post(
    BASE + "/evaluate",
    response_model=Evaluation,
    responses=problem_responses(
        ValidationFailed,
        AuthenticationFailed,
        ResourceNotFound,
        ConnectorNotConfigured,
        CurrencyNotSupported,
    ),
    summary="Dry run: the routing decision for an intent's fields (nothing is written)",
    description="By the active version, or by `version` (a draft or an earlier one; 404 if none).",
)
async def evaluate_routing(
    merchant_id: str, body: EvaluateRouting, caller: CurrentCaller, conn: ReadConn, request: Request
) -> Response:
    runtime = runtime_of(request)
    record = await evaluate(conn, runtime.provider_health, runtime.success_rates, caller, merchant_id, body)
    return json_response({"provider": record.chosen, "routing": record.as_json()})
