"""HTTP of the users API: invite, list, read, change (role, disabled), remove, invite again.
The rules are the service's (payorch.users.service); docs/access.md, "People"."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from payorch.errors import (
    AuthenticationFailed,
    Forbidden,
    InvalidState,
    LimitExceeded,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.http.deps import Conn, CurrentCaller, ReadConn, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.listing import list_route
from payorch.http.responses import json_response
from payorch.users import service
from payorch.users.invites import invite_url
from payorch.users.schemas import (
    InvitedUser,
    InviteUser,
    UpdateUser,
    UserList,
    UserListQuery,
    UserResponse,
    invited_body,
    user_body,
    user_page_body,
)

router = APIRouter(tags=["Users"])
BASE = "/v1/admin/users"
OWNERS_RULE = (
    " Only an owner (signed in) or the operator's command line makes, changes, disables or "
    "removes an owner: anyone else, an API key included, gets 403 FORBIDDEN."
)
LAST_OWNER_RULE = (
    " The application's last ACTIVE owner cannot be demoted, disabled or removed (409 "
    "INVALID_STATE). The person's dashboard sessions end at once."
)


@router.post(
    BASE,
    status_code=201,
    response_model=InvitedUser,
    responses=problem_responses(
        ValidationFailed, AuthenticationFailed, Forbidden, InvalidState, LimitExceeded
    ),
    summary="Invite a person (the invite URL is shown only in this answer)",
    description="The email is lowercased; one user per email and application (409 "
    "INVALID_STATE). At most PAYORCH_MAX_USERS users per application: one more is 409 "
    "LIMIT_EXCEEDED (details: limit, current)." + OWNERS_RULE,
)
async def invite_user(body: InviteUser, caller: CurrentCaller, request: Request, conn: Conn) -> Response:
    # No Idempotency-Key here on purpose: a stored answer would keep the invite URL at rest.
    runtime = runtime_of(request)
    user, token = await service.invite(
        conn, runtime.clock, caller, body.email, body.role, limit=runtime.settings.max_users
    )
    return json_response(invited_body(user, invite_url(runtime.settings.public_url, token)), 201)


@list_route(router, BASE, model=UserList, summary="List the application's users, newest first")
async def list_users(
    caller: CurrentCaller, conn: ReadConn, query: Annotated[UserListQuery, Query()]
) -> Response:
    return json_response(user_page_body(await service.list_users(conn, caller, query.cursor, query.limit)))


@router.get(
    BASE + "/{user_id}",
    response_model=UserResponse,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound),
    summary="Read a user",
)
async def get_user(user_id: str, caller: CurrentCaller, conn: ReadConn) -> Response:
    return json_response(user_body(await service.get(conn, caller, user_id)))


@router.patch(
    BASE + "/{user_id}",
    response_model=UserResponse,
    responses=problem_responses(
        ValidationFailed, AuthenticationFailed, Forbidden, ResourceNotFound, InvalidState
    ),
    summary="Change a user's role, or disable or enable them",
    description="`role`, `disabled` or both (the role first; neither: nothing changes). An "
    "INVITED user cannot be disabled: remove them." + LAST_OWNER_RULE + OWNERS_RULE,
)
async def update_user(
    user_id: str, body: UpdateUser, caller: CurrentCaller, request: Request, conn: Conn
) -> Response:
    clock = runtime_of(request).clock
    user = await service.get(conn, caller, user_id)  # 404 first, whatever the body asks
    if body.role is not None:
        user = await service.set_role(conn, clock, caller, user_id, body.role)
    if body.disabled is not None:
        user = await service.set_disabled(conn, clock, caller, user_id, body.disabled)
    return json_response(user_body(user))


@router.delete(
    BASE + "/{user_id}",
    status_code=204,
    responses=problem_responses(AuthenticationFailed, Forbidden, ResourceNotFound, InvalidState),
    summary="Remove a user (their passkeys, recovery codes and sessions with them)",
    description="Their activity entries stay." + LAST_OWNER_RULE + OWNERS_RULE,
)
async def remove_user(user_id: str, caller: CurrentCaller, request: Request, conn: Conn) -> Response:
    await service.remove(conn, runtime_of(request).clock, caller, user_id)
    return Response(status_code=204)


@router.post(
    BASE + "/{user_id}/invite",
    response_model=InvitedUser,
    responses=problem_responses(AuthenticationFailed, Forbidden, ResourceNotFound, InvalidState),
    summary="A new invite link for an INVITED user (the previous link stops working)",
    description="For a link that expired or was lost; 409 INVALID_STATE once the user is "
    "ACTIVE or DISABLED. Shown only in this answer." + OWNERS_RULE,
)
async def reinvite_user(user_id: str, caller: CurrentCaller, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    user, token = await service.renew_invite(conn, runtime.clock, caller, user_id)
    return json_response(invited_body(user, invite_url(runtime.settings.public_url, token)))
