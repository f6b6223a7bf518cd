"""The recovery codes pages: the ten codes shown once after enrolling a second factor, and
/dashboard/recovery-codes, where a signed-in person sees how many are left and makes new ones
(the old ones then stop working)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from payorch.dashboard.web import DashboardRoute, FormDep, ViewerDep, render
from payorch.http.deps import Conn
from payorch.runtime import Runtime
from payorch.users import recovery_codes, sign_in
from payorch.users import service as users
from payorch.users.records import User

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)


async def recovery_codes_page(
    request: Request, conn: AsyncConnection, runtime: Runtime, user: User, *, first: bool = False
) -> Response:
    codes = await sign_in.new_recovery_codes(conn, runtime.clock, user)
    return render(
        request,
        "recovery_codes.html",
        title="Your recovery codes",
        codes=codes,
        first=first,
        count=recovery_codes.COUNT,
    )


@router.get("/recovery-codes")
async def recovery_codes_form(request: Request, viewer: ViewerDep, conn: Conn) -> Response:
    caller = viewer.caller
    if caller.user_id is None:
        return render(
            request, "message.html", viewer, 404, title="Not found", message="A key has no recovery codes."
        )
    user = await users.find(conn, caller.application_id, caller.user_id)
    left = 0 if user is None else await sign_in.recovery_codes_left(conn, user)
    return render(request, "recovery_codes.html", viewer, title="Recovery codes", codes=[], left=left)


@router.post("/recovery-codes")
async def new_recovery_codes(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    caller = viewer.caller
    user = None if caller.user_id is None else await users.find(conn, caller.application_id, caller.user_id)
    if user is None:
        return render(
            request, "message.html", viewer, 404, title="Not found", message="A key has no recovery codes."
        )
    codes = await sign_in.new_recovery_codes(conn, viewer.runtime.clock, user)
    return render(
        request, "recovery_codes.html", viewer, title="Your recovery codes", codes=codes, first=False
    )
