"""HTTP of payment intents: parse, call the service, answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from payorch.errors import (
    AuthenticationFailed,
    ConnectorNotConfigured,
    CurrencyNotSupported,
    IdempotencyConflict,
    IdempotencyKeyInUse,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.http.deps import (
    CurrentCaller,
    IdempotencyKey,
    ListConn,
    ReadConn,
    body_scope,
    runtime_of,
)
from payorch.http.errors import problem_responses
from payorch.http.listing import list_route
from payorch.http.responses import idempotent_response, json_response
from payorch.intents import create_at_once, listing, service
from payorch.intents.schemas import (
    CreatePaymentIntent,
    IntentListQuery,
    PaymentIntentList,
    PaymentIntentResponse,
    intent_body,
    intent_summary_body,
)

router = APIRouter(prefix="/v1/payment-intents", tags=["Payment intents"])


@router.post(
    "",
    status_code=201,
    response_model=PaymentIntentResponse,
    responses=problem_responses(
        ValidationFailed,
        AuthenticationFailed,
        ResourceNotFound,
        IdempotencyConflict,
        IdempotencyKeyInUse,
        ConnectorNotConfigured,
        CurrencyNotSupported,
    ),
    summary="Create a payment intent",
)
async def create_payment_intent(
    body: CreatePaymentIntent,
    request: Request,
    caller: CurrentCaller,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    runtime = runtime_of(request)
    scope = body_scope(runtime, caller, request, idempotency_key, body)
    return idempotent_response(
        await create_at_once.create_intent(
            runtime.phases, runtime.clock, runtime.idempotency, caller, body, scope
        )
    )


@list_route(
    router,
    "",
    model=PaymentIntentList,
    summary="List payment intents, newest first",
    description="Each item is the intent without its timeline and payment: read the intent for those.",
)
async def list_payment_intents(
    caller: CurrentCaller, conn: ListConn, query: Annotated[IntentListQuery, Query()]
) -> Response:
    page = await listing.list_intents(conn, caller, query)
    return json_response(
        {"items": [intent_summary_body(i) for i in page.items], "next_cursor": page.next_cursor}
    )


@router.get(
    "/{payment_intent_id}",
    response_model=PaymentIntentResponse,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound),
    summary="Read a payment intent",
)
async def get_payment_intent(payment_intent_id: str, caller: CurrentCaller, conn: ReadConn) -> Response:
    return json_response(intent_body(await service.read_intent(conn, caller, payment_intent_id)))
