"""HTTP of the connectors domain: parse, call the service, answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from payorch.connectors import service
from payorch.connectors.schemas import (
    ConnectorList,
    ConnectorResponse,
    CreateConnector,
    UpdateConnector,
)
from payorch.errors import (
    AuthenticationFailed,
    ConnectorConfigAlreadyExists,
    Forbidden,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.http.deps import Conn, CurrentCaller, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.listing import NoQuery, list_route
from payorch.http.responses import json_response

router = APIRouter(tags=["Connectors"])

BASE = "/v1/admin/merchant-accounts/{merchant_id}/connectors"


@list_route(
    router,
    BASE,
    model=ConnectorList,
    summary="List a merchant's provider configurations (credentials never returned)",
    also=(ResourceNotFound,),
)
async def list_connectors(
    merchant_id: str, caller: CurrentCaller, conn: Conn, query: Annotated[NoQuery, Query()]
) -> Response:
    listed = await service.list_connectors(conn, caller, merchant_id)
    return json_response(listed.model_dump())


@router.post(
    BASE,
    status_code=201,
    response_model=ConnectorResponse,
    responses=problem_responses(
        ValidationFailed,
        AuthenticationFailed,
        Forbidden,
        ResourceNotFound,
        ConnectorConfigAlreadyExists,
    ),
    summary="Configure a provider for a merchant",
)
async def create_connector(
    merchant_id: str, body: CreateConnector, caller: CurrentCaller, conn: Conn, request: Request
) -> Response:
    runtime = runtime_of(request)
    created = await service.create_connector(
        conn, runtime.clock, runtime.cipher, caller, merchant_id, body
    )
    return json_response(created.model_dump(), 201)


@router.patch(
    BASE + "/{config_id}",
    response_model=ConnectorResponse,
    responses=problem_responses(
        ValidationFailed, AuthenticationFailed, Forbidden, ResourceNotFound
    ),
    summary="Change a provider configuration (priority, enabled, mode, credentials)",
)
async def update_connector(
    merchant_id: str,
    config_id: str,
    body: UpdateConnector,
    caller: CurrentCaller,
    conn: Conn,
    request: Request,
) -> Response:
    runtime = runtime_of(request)
    updated = await service.update_connector(
        conn, runtime.clock, runtime.cipher, caller, merchant_id, config_id, body
    )
    return json_response(updated.model_dump())
