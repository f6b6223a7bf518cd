"""FastAPI dependencies shared by every domain's endpoints.

Each dependency takes the request and nothing FastAPI must resolve first, and endpoints reach the
runtime by ``runtime_of(request)``, not through a dependency: FastAPI 0.165 solves every
dependency, nested or cached, with its own pass over the request's parameters (docs/performance-decisions.md,
"Dependencies"). The caller stays a
dependency: FastAPI runs dependencies before it validates the body, so a request without a
valid key is answered 401 whatever its body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Depends, Header, Request
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.access.operations import required_scope
from payorch.auth.service import Caller
from payorch.db import Phases
from payorch.db.bounds import abandon, cut_short
from payorch.db.unavailable import may_write, raise_if_lost
from payorch.errors import Forbidden, ValidationFailed
from payorch.idempotency.service import Scope
from payorch.runtime import Runtime


def runtime_of(request: Request) -> Runtime:
    """The runtime of the app serving ``request`` (payorch.app.create_app sets it)."""
    runtime: Runtime = request.app.state.runtime
    return runtime


# Set by RateLimitMiddleware in the request's state: (Authorization header, Caller) once the key
# was checked, so a request pays for one check, not two.
AUTHENTICATED_CALLER = "authenticated_caller"


async def authenticate(request: Request) -> Caller:
    # Only the request as a parameter: each sub-dependency costs FastAPI a resolution per request.
    authorization = request.headers.get("authorization")
    checked = request.scope.get("state", {}).get(AUTHENTICATED_CALLER)
    if checked is not None and checked[0] == authorization:
        caller: Caller = checked[1]  # the rate limiter checked this header for this request
    else:
        caller = await runtime_of(request).authenticator.authenticate(authorization)
    request.state.caller = caller
    permit(caller, request)
    return caller


def permit(caller: Caller, request: Request) -> None:
    """Refuse (403 FORBIDDEN, before the endpoint runs: nothing changes) an operation outside
    the caller's scopes, or one the table of operations does not list (deny by default):
    payorch.access.operations."""
    # The route's template; the request's URL (built on demand) only when no route matched.
    path: str = getattr(request.scope.get("route"), "path_format", None) or request.url.path
    scope = required_scope(request.method, path)
    if scope is None:
        raise Forbidden(
            f"{request.method} {path} is not in the table of operations and their scopes: "
            "refused to every caller.",
            {"required_scope": None},
        )
    if not caller.permits(scope):
        raise Forbidden(
            f"This operation needs the scope {scope}, which the caller does not hold.",
            {"required_scope": scope},
        )


CurrentCaller = Annotated[Caller, Depends(authenticate)]


async def request_connection(request: Request) -> AsyncIterator[AsyncConnection]:
    """One transaction per request: commits when the endpoint returns, rolls back if it raises
    (``payorch.db.prepared.undo`` rolls back in its course). PostgreSQL: ``Database.transaction``
    (the driver's own, its statements and the engine's inside it); SQLite: the engine's.

    scope="function" (below) makes the commit happen before the response is sent, so a client
    never sees success for a write that did not commit. A lost connection is 503, never retried
    (payorch.db.unavailable).
    """
    database = runtime_of(request).database
    if not database.is_sqlite:
        async with database.transaction() as step:
            yield step
        return
    may_write()
    conn: AsyncConnection | None = None  # until connected, a timeout is the connect's
    try:
        async with database.engine.connect() as conn:
            try:
                yield conn
                if conn.in_transaction():
                    await conn.commit()
            except BaseException as exc:
                if cut_short(exc):
                    await abandon(conn)  # a ROLLBACK would wait on it (payorch.db.bounds)
                else:
                    await conn.rollback()
                raise
    except Exception as exc:
        raise_if_lost(exc, connected=conn is not None)
        raise


Conn = Annotated[AsyncConnection, Depends(request_connection, scope="function")]


async def read_connection(request: Request) -> AsyncIterator[AsyncConnection]:
    """For endpoints that only read: see Database.reading (no BEGIN/COMMIT on PostgreSQL)."""
    async with runtime_of(request).database.reading() as conn:
        yield conn


ReadConn = Annotated[AsyncConnection, Depends(read_connection, scope="function")]


async def list_connection(request: Request) -> AsyncIterator[AsyncConnection]:
    """For the application-wide lists and the dashboard's lists and overview: the read replica
    while it is reachable and caught up, else the primary (Database.listing, db/replica.py).
    A list may then miss what was written less than PAYORCH_REPLICA_MAX_LAG_SECONDS ago; reads
    of one object, lists under one object and configuration lists take ``ReadConn`` (the
    primary: a caller reads them right after writing them)."""
    async with runtime_of(request).database.listing() as conn:
        yield conn


ListConn = Annotated[AsyncConnection, Depends(list_connection, scope="function")]


IDEMPOTENCY_KEY_PATTERN = r"^[!-~]([ -~]{0,253}[!-~])?$"

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="One unique value per operation; a retry with the same key and body "
        "returns the first answer and creates nothing twice. 1 to 255 printable ASCII characters.",
        # Documented only (idempotency.check_key answers in its own words); no edge space, since
        # HTTP strips it before the service sees the key.
        json_schema_extra={"pattern": IDEMPOTENCY_KEY_PATTERN},
    ),
]


def idempotency_scope(
    runtime: Runtime, caller: Caller, request: Request, key: str | None, body: object
) -> Scope | None:
    if key is None:
        return None
    return runtime.idempotency.scope(caller.application_id, request.method, request.url.path, key, body)


def body_scope(
    runtime: Runtime, caller: Caller, request: Request, key: str | None, body: BaseModel
) -> Scope | None:
    """``idempotency_scope`` of a request whose body is ``body`` (the fields it sent)."""
    return idempotency_scope(runtime, caller, request, key, body.model_dump(mode="json", exclude_unset=True))


BodyT = TypeVar("BodyT", bound=BaseModel)


async def optional_body(request: Request, body: BodyT | None, absent: type[BodyT], example: str) -> BodyT:
    """An optional body, ``absent()`` when none was sent. A JSON null is refused (the document
    shows the object only, payorch.http.openapi): only an absent body means "the defaults"."""
    if body is None and (await request.body()).strip() == b"null":
        raise ValidationFailed.field("body", f"must be a JSON object such as {example}, or no body at all")
    return absent() if body is None else body


@dataclass(frozen=True, slots=True)
class FlowCall:
    """What the endpoint of a multi-phase operation under an Idempotency-Key (checkout, cancel,
    refund) hands its service: the caller, the flow's phases and the key's scope."""

    runtime: Runtime
    caller: Caller
    phases: Phases
    request: Request
    idempotency_key: str | None

    def scope(self, body: BaseModel) -> Scope | None:
        return body_scope(self.runtime, self.caller, self.request, self.idempotency_key, body)


async def flow_call(request: Request, idempotency_key: IdempotencyKey = None) -> FlowCall:
    # The caller checked here, not as a dependency of this one: one dependency to resolve, and
    # still before the body is validated.
    caller = await authenticate(request)
    runtime = runtime_of(request)
    return FlowCall(runtime, caller, runtime.phases, request, idempotency_key)


FlowCallDep = Annotated[FlowCall, Depends(flow_call)]
