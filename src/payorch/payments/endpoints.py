"""HTTP of payments and refunds: parse, call the service, answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from payorch.errors import (
    AuthenticationFailed,
    PaymentDisputed,
    ProviderError,
    RefundAmountExceeded,
    ResourceNotFound,
)
from payorch.http.deps import (
    Conn,
    CurrentCaller,
    FlowCallDep,
    ListConn,
    optional_body,
)
from payorch.http.errors import MOVE_PROBLEMS, problem_responses
from payorch.http.listing import NoQuery, list_route
from payorch.http.responses import idempotent_response, json_response
from payorch.idempotency.records import IdempotentResult
from payorch.payments import refunds, service
from payorch.payments.schemas import (
    CreateRefund,
    PaymentList,
    PaymentListQuery,
    PaymentResponse,
    RefundList,
    RefundResponse,
    payment_body,
    refund_body,
)

router = APIRouter(tags=["Payments and refunds"])


@list_route(
    router,
    "/v1/payments",
    model=PaymentList,
    summary="List payments, newest first",
)
async def list_payments(
    caller: CurrentCaller, conn: ListConn, query: Annotated[PaymentListQuery, Query()]
) -> Response:
    page = await service.list_payments(conn, caller, query)
    return json_response(
        {"items": [payment_body(p) for p in page.items], "next_cursor": page.next_cursor}
    )


@router.get(
    "/v1/payments/{payment_id}",
    response_model=PaymentResponse,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound),
    summary="Read a payment",
)
async def get_payment(payment_id: str, caller: CurrentCaller, conn: Conn) -> Response:
    return json_response(payment_body(await service.read_payment(conn, caller, payment_id)))


@router.post(
    "/v1/payments/{payment_id}/refunds",
    status_code=201,
    response_model=RefundResponse,
    responses={
        202: {
            "model": RefundResponse,
            "description": "The provider's answer is unknown: PENDING; "
            "refund.succeeded or refund.failed tells the end.",
        },
        **problem_responses(
            *MOVE_PROBLEMS,
            PaymentDisputed,
            RefundAmountExceeded,
            ProviderError,
        ),
    },
    summary="Refund a payment, totally or partially",
)
async def create_refund(
    payment_id: str, call: FlowCallDep, body: CreateRefund | None = None
) -> Response:
    # Only an absent body means "all that is left"; a JSON null is a mistake, like "amount": null.
    body = await optional_body(call.request, body, CreateRefund, '{} or {"amount": 500}')
    reply = await refunds.request_refund(
        call.phases, call.runtime, call.caller, payment_id, body, call.scope(body)
    )
    if isinstance(reply, IdempotentResult):
        return idempotent_response(reply)
    return json_response(reply.body, reply.status)


@list_route(
    router,
    "/v1/payments/{payment_id}/refunds",
    model=RefundList,
    summary="List a payment's refunds, newest first",
    also=(ResourceNotFound,),
)
async def list_refunds(
    payment_id: str, caller: CurrentCaller, conn: Conn, query: Annotated[NoQuery, Query()]
) -> Response:
    listed = await refunds.list_refunds(conn, caller, payment_id)
    return json_response({"items": [refund_body(refund) for refund in listed]})
