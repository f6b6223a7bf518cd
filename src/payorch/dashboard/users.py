"""The application's people: list (paged), invite (the invite link shown once), change a role,
disable or enable, remove; every change through payorch.users.service, with its rules (only an
owner touches owners, the last active owner stays) answered on the page beside the form."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from payorch.access.roles import ROLES
from payorch.dashboard.paging import page_values
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, field, render
from payorch.errors import ApiError, Forbidden, InvalidState, LimitExceeded, ValidationFailed
from payorch.http.deps import Conn, ReadConn
from payorch.http.listing import PageQuery, id_cursor
from payorch.users import service
from payorch.users.invites import INVITE_HOURS, invite_url

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

# The refusals a person can fix from this page: shown on it, above the forms, with their status.
_SHOWN = (Forbidden, InvalidState, LimitExceeded, ValidationFailed)

NOTICES = {
    "role_changed": "Role changed. Their open sessions ended: they sign in again with the new role.",
    "disabled": "Disabled: their sessions ended and they cannot sign in until enabled.",
    "enabled": "Enabled: they can sign in again.",
    "removed": "Removed: they can no longer sign in. Their past actions stay in the activity log.",
}


class UserPageQuery(PageQuery):
    cursor: Annotated[str | None, id_cursor("usr")] = None


async def _page(
    request: Request,
    viewer: Viewer,
    conn: AsyncConnection,
    *,
    status_code: int = 200,
    problem: str = "",
    typed: dict[str, str] | None = None,
) -> Response:
    values = page_values(request)
    query = UserPageQuery.model_validate(values)  # a 400 page names what to fix
    page = await service.list_users(conn, viewer.caller, query.cursor, query.limit)
    return render(
        request,
        "users.html",
        viewer,
        status_code=status_code,
        title="Users",
        page=page,
        first=query.cursor is None,
        limit=values.get("limit", ""),
        roles=ROLES,
        notices=NOTICES,
        problem=problem,
        typed=typed or {},
        invite_hours=INVITE_HOURS,
    )


@router.get("/users")
async def users(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    return await _page(request, viewer, conn)


@router.post("/users")
async def invite(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    runtime = viewer.runtime
    typed = {"email": field(form, "email"), "role": field(form, "role")}
    try:
        user, token = await service.invite(
            conn,
            runtime.clock,
            viewer.caller,
            typed["email"],
            typed["role"],
            limit=runtime.settings.max_users,
        )
    except _SHOWN as refused:
        await conn.rollback()  # nothing of the refused invite stays
        return await _page(
            request, viewer, conn, status_code=refused.status, problem=_said(refused), typed=typed
        )
    # Rendered, not redirected: the link is in this answer only (Cache-Control: no-store).
    url = invite_url(runtime.settings.public_url, token)
    return render(
        request, "user_invited.html", viewer, title="Invitation made", user=user, url=url, hours=INVITE_HOURS
    )


@router.post("/users/{user_id}/role")
async def set_role(user_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    return await _change(request, viewer, conn, user_id, "role_changed", role=field(form, "role"))


@router.post("/users/{user_id}/disable")
async def disable(user_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    return await _change(request, viewer, conn, user_id, "disabled")


@router.post("/users/{user_id}/enable")
async def enable(user_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    return await _change(request, viewer, conn, user_id, "enabled")


@router.post("/users/{user_id}/remove")
async def remove(user_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    return await _change(request, viewer, conn, user_id, "removed")


async def _change(
    request: Request, viewer: Viewer, conn: AsyncConnection, user_id: str, done: str, role: str = ""
) -> Response:
    clock, caller = viewer.runtime.clock, viewer.caller
    try:
        if done == "role_changed":
            await service.set_role(conn, clock, caller, user_id, role)
        elif done == "removed":
            await service.remove(conn, clock, caller, user_id)
        else:
            await service.set_disabled(conn, clock, caller, user_id, done == "disabled")
    except _SHOWN as refused:
        await conn.rollback()
        return await _page(request, viewer, conn, status_code=refused.status, problem=_said(refused))
    return back_to(request, f"/users?notice={done}")


def _said(refused: ApiError) -> str:
    """The refusal as the page says it: the service's message (with the field for a 400)."""
    if isinstance(refused, ValidationFailed):
        return "; ".join(f"{e['field']}: {e['message']}" for e in refused.details.get("errors", ())) or (
            refused.message
        )
    return refused.message
