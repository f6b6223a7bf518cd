"""HTTP of payment links (the API): parse, call the service, answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from payorch.errors import (
    AuthenticationFailed,
    IdempotencyConflict,
    IdempotencyKeyInUse,
    InvalidState,
    LimitExceeded,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.http.deps import (
    Conn,
    CurrentCaller,
    IdempotencyKey,
    ListConn,
    body_scope,
    optional_body,
    runtime_of,
)
from payorch.http.errors import problem_responses
from payorch.http.listing import list_route
from payorch.http.responses import idempotent_response, json_response
from payorch.links import service
from payorch.links.schemas import (
    CreatePaymentLink,
    DeactivatePaymentLink,
    LinkListQuery,
    PaymentLinkList,
    PaymentLinkResponse,
    link_body,
)

router = APIRouter(prefix="/v1/payment-links", tags=["Payment links"])


@router.post(
    "",
    status_code=201,
    response_model=PaymentLinkResponse,
    responses=problem_responses(
        ValidationFailed,
        AuthenticationFailed,
        ResourceNotFound,
        IdempotencyConflict,
        IdempotencyKeyInUse,
        LimitExceeded,
    ),
    summary="Create a payment link",
    description="A page at `url` where a buyer pays `amount` without a key, up to `max_payments` "
    "times, until `expires_at`. At most PAYORCH_MAX_ACTIVE_PAYMENT_LINKS ACTIVE links per "
    "application (one more: 409 LIMIT_EXCEEDED). Logged in the activity log.",
)
async def create_payment_link(
    body: CreatePaymentLink,
    request: Request,
    caller: CurrentCaller,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    runtime = runtime_of(request)
    scope = body_scope(runtime, caller, request, idempotency_key, body)
    settings = runtime.settings

    async def operation(conn: AsyncConnection) -> tuple[int, object]:
        created = await service.create_link(
            conn, runtime.clock, caller, body, limit=settings.max_active_payment_links
        )
        return 201, link_body(created, settings.public_url)

    return idempotent_response(await runtime.idempotency.run(scope, operation))


@list_route(
    router,
    "",
    model=PaymentLinkList,
    summary="List payment links, newest first",
    description="Each with its status as it is now (an ACTIVE link past its expiry or its "
    "max_payments shows EXPIRED or COMPLETED) and what it collected.",
)
async def list_payment_links(
    request: Request, caller: CurrentCaller, conn: ListConn, query: Annotated[LinkListQuery, Query()]
) -> Response:
    runtime = runtime_of(request)
    page = await service.list_links(conn, runtime.clock, caller, query)
    items = [link_body(item, runtime.settings.public_url) for item in page.items]
    return json_response({"items": items, "next_cursor": page.next_cursor})


@router.get(
    "/{payment_link_id}",
    response_model=PaymentLinkResponse,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound),
    summary="Read a payment link",
)
async def get_payment_link(
    payment_link_id: str, request: Request, caller: CurrentCaller, conn: Conn
) -> Response:
    runtime = runtime_of(request)
    detail = await service.read_link(conn, runtime.clock, caller, payment_link_id)
    return json_response(link_body(detail, runtime.settings.public_url))


@router.post(
    "/{payment_link_id}/deactivate",
    response_model=PaymentLinkResponse,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound, InvalidState),
    summary="Deactivate a payment link (its page then answers 410 with the optional message)",
    description="An ACTIVE link becomes DEACTIVATED; a DEACTIVATED one is answered as it is; a "
    "COMPLETED or EXPIRED one is 409 INVALID_STATE. Logged in the activity log.",
)
async def deactivate_payment_link(
    payment_link_id: str,
    request: Request,
    caller: CurrentCaller,
    conn: Conn,
    body: DeactivatePaymentLink | None = None,
) -> Response:
    runtime = runtime_of(request)
    asked = await optional_body(request, body, DeactivatePaymentLink, '{} or {"message": "Sold out"}')
    detail = await service.deactivate_link(conn, runtime.clock, caller, payment_link_id, asked)
    return json_response(link_body(detail, runtime.settings.public_url))
