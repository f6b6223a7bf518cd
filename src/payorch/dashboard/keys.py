"""API keys: list, create (the key shown once), revoke (refused for the last active one)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.auth import credentials
from payorch.auth.schemas import CredentialListQuery
from payorch.dashboard.paging import page_values
from payorch.dashboard.web import DashboardRoute, FormDep, ViewerDep, back_to, field, render
from payorch.http.deps import Conn, ReadConn, runtime_of

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)


@router.get("/api-keys")
async def keys(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    """A page of the API's list: ``cursor`` and ``limit`` as GET /v1/admin/api-credentials."""
    values = page_values(request)
    query = CredentialListQuery.model_validate(values)  # a 400 page names what to fix
    page = await credentials.list_credentials(conn, viewer.caller, query.cursor, query.limit)
    return render(
        request,
        "keys.html",
        viewer,
        title="API keys",
        page=page,
        first=query.cursor is None,
        limit=values.get("limit", ""),
        max_keys=viewer.runtime.settings.max_api_keys,
    )


@router.post("/api-keys")
async def create(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    runtime, caller = viewer.runtime, viewer.caller
    # A person's key holds their role's scopes (a key may not grant more than its maker holds).
    held = sorted(caller.scopes) if caller.scopes is not None else None
    issued = await credentials.create_credential(
        conn,
        runtime.clock,
        caller,
        field(form, "name")[:200] or None,
        scopes=held,
        limit=runtime.settings.max_api_keys,
    )
    # Rendered, not redirected: the key is in this answer only (Cache-Control: no-store).
    return render(request, "key_created.html", viewer, title="API key created", issued=issued)


@router.post("/api-keys/{credential_id}/revoke")
async def revoke(credential_id: str, request: Request, viewer: ViewerDep, form: FormDep) -> Response:
    phases = runtime_of(request).phases
    runtime = viewer.runtime
    await credentials.revoke_credential(
        phases, runtime.clock, runtime.authenticator, viewer.caller, credential_id
    )
    # Revoking the key this session signed in with ends the session: the next page is sign-in.
    return back_to(request, "/api-keys?notice=revoked")
