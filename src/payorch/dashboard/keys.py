"""API keys: list, create (the key shown once), revoke (refused for the last active one)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.access.scopes import SCOPES
from payorch.auth import credentials
from payorch.auth.schemas import CredentialListQuery
from payorch.auth.service import Caller
from payorch.dashboard.paging import page_values
from payorch.dashboard.web import DashboardRoute, FormDep, ViewerDep, back_to, field, render
from payorch.errors import ValidationFailed
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
        scope_groups=scope_groups(viewer.caller),
    )


def scope_groups(caller: Caller) -> list[tuple[str, list[tuple[str, str]]]]:
    """The scopes ``caller`` may give a key, grouped by resource, in the table's order:
    [(resource, [(scope, what it allows), ...]), ...]."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for scope, allows in SCOPES.items():
        if caller.permits(scope):
            resource = scope.split(":")[0].replace("_", " ").capitalize().replace("Api ", "API ")
            groups.setdefault(resource, []).append((scope, allows))
    return list(groups.items())


def expiry_of(form: FormData) -> datetime | None:
    """The form's expiry (a datetime-local field, read as UTC); None when left empty."""
    text = field(form, "expires_at")
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed.field(
            "expires_at", "must be a date and time, such as 2026-12-31T23:59"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@router.post("/api-keys")
async def create(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    runtime, caller = viewer.runtime, viewer.caller
    # The scopes ticked; none: every scope the maker holds (a person's key holds their role's
    # scopes, no more: a key may not grant more than its maker holds).
    ticked = [value for value in form.getlist("scopes") if isinstance(value, str)]
    held = sorted(caller.scopes) if caller.scopes is not None else None
    issued = await credentials.create_credential(
        conn,
        runtime.clock,
        caller,
        field(form, "name")[:200] or None,
        scopes=ticked or held,
        expires_at=expiry_of(form),
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
