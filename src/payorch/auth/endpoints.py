"""HTTP of API credentials administration: parse, call the service, answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from payorch.auth import credentials
from payorch.auth.schemas import (
    ApiCredentialList,
    CreateApiCredential,
    CreatedApiCredential,
    CredentialListQuery,
    credential_page_body,
    issued_body,
)
from payorch.errors import (
    AuthenticationFailed,
    Forbidden,
    InvalidState,
    LimitExceeded,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.http.deps import Conn, CurrentCaller, ReadConn, optional_body, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.listing import list_route
from payorch.http.responses import json_response

router = APIRouter(tags=["API credentials"])


@router.post(
    "/v1/admin/api-credentials",
    status_code=201,
    response_model=CreatedApiCredential,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, Forbidden, LimitExceeded),
    summary="Create an additional API key (shown only in this answer)",
    description="At most PAYORCH_MAX_API_KEYS active (unrevoked) keys per application: one "
    "more is 409 LIMIT_EXCEEDED (details: limit, current). `scopes` restricts the key "
    "(left out: every scope); a key never grants more than the calling key holds (403 "
    "FORBIDDEN, details.required_scope: the first scope the caller lacks). `expires_at`: the "
    "key is refused (401) from then on; it must be in the future (400 otherwise).",
)
async def create_api_credential(
    caller: CurrentCaller,
    conn: Conn,
    request: Request,
    body: CreateApiCredential | None = None,
) -> Response:
    # No Idempotency-Key here on purpose: a stored answer would keep the plain key at rest.
    runtime = runtime_of(request)
    asked = await optional_body(request, body, CreateApiCredential, '{} or {"name": "checkout"}')
    issued = await credentials.create_credential(
        conn,
        runtime.clock,
        caller,
        asked.name,
        scopes=asked.scopes,
        expires_at=asked.expires_at,
        limit=runtime.settings.max_api_keys,
    )
    return json_response(issued_body(issued), 201)


@list_route(
    router,
    "/v1/admin/api-credentials",
    model=ApiCredentialList,
    summary="List the application's API keys, newest first (never the keys themselves)",
)
async def list_api_credentials(
    caller: CurrentCaller, conn: ReadConn, query: Annotated[CredentialListQuery, Query()]
) -> Response:
    page = await credentials.list_credentials(conn, caller, query.cursor, query.limit)
    return json_response(credential_page_body(page, caller.environment))


@router.delete(
    "/v1/admin/api-credentials/{credential_id}",
    status_code=204,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound, InvalidState),
    summary="Revoke an API key (refused at once)",
)
async def revoke_api_credential(credential_id: str, caller: CurrentCaller, request: Request) -> Response:
    # Phases, not Conn: the key is forgotten from this process's cache after the commit.
    runtime = runtime_of(request)
    phases = runtime.phases
    await credentials.revoke_credential(phases, runtime.clock, runtime.authenticator, caller, credential_id)
    return Response(status_code=204)
