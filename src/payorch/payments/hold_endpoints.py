"""HTTP of holds: capture and void a payment held for a manual capture (payments/holds.py)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from payorch.errors import CaptureAmountExceeded, CaptureMethodNotSupported, ProviderError
from payorch.http.deps import FlowCallDep, optional_body
from payorch.http.errors import MOVE_PROBLEMS, problem_responses
from payorch.http.responses import flow_response
from payorch.observability import metrics
from payorch.payments import hold_metrics, holds
from payorch.payments.schemas import CapturePayment, PaymentResponse, VoidPayment

router = APIRouter(tags=["Payments and refunds"])


def _received(action: str, event: str) -> dict[str, object]:
    return {
        "model": PaymentResponse,
        "description": f"The provider received the {action} and confirms it later (its notification): "
        f"the payment is still REQUIRES_CAPTURE; {event} tells the end.",
    }

metrics.on_scrape(hold_metrics.refresh_holds_due)


@router.post(
    "/v1/payments/{payment_id}/capture",
    response_model=PaymentResponse,
    responses={
        202: _received("capture", "payment.captured"),
        **problem_responses(*MOVE_PROBLEMS, CaptureAmountExceeded, CaptureMethodNotSupported, ProviderError),
    },
    summary="Capture a held payment (REQUIRES_CAPTURE), all of it or part",
)
async def capture_payment(payment_id: str, call: FlowCallDep, body: CapturePayment | None = None) -> Response:
    body = await optional_body(call.request, body, CapturePayment, '{} or {"amount": 500}')
    return flow_response(
        await holds.capture_payment(
            call.phases, call.runtime, call.caller, payment_id, body.amount, call.scope(body)
        )
    )


@router.post(
    "/v1/payments/{payment_id}/void",
    response_model=PaymentResponse,
    responses={202: _received("void", "payment.voided"), **problem_responses(*MOVE_PROBLEMS, ProviderError)},
    summary="Release a held payment (REQUIRES_CAPTURE) without capturing it",
)
async def void_payment(payment_id: str, call: FlowCallDep, body: VoidPayment | None = None) -> Response:
    body = await optional_body(call.request, body, VoidPayment, "{}")
    return flow_response(
        await holds.void_payment(call.phases, call.runtime, call.caller, payment_id, call.scope(body))
    )
