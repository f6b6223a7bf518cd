"""HTTP of checkouts: the checkout request, the buyer's return, provider notifications."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from payorch.checkouts import cancel, returns, service
from payorch.checkouts.schemas import CancelPaymentIntent, CheckoutRequestBody, CheckoutResponse
from payorch.errors import (
    ConnectorNotConfigured,
    ConnectorUnavailable,
    CurrencyNotSupported,
    ProviderError,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.http.deps import FlowCallDep, optional_body, runtime_of
from payorch.http.errors import MOVE_PROBLEMS, problem_responses
from payorch.http.responses import flow_response, json_response
from payorch.intents.schemas import PaymentIntentResponse
from payorch.providers.base import IncomingNotification

router = APIRouter(tags=["Checkout"])
# Cancel belongs with the intent's own operations in the reference (a router's tags add up).
cancel_router = APIRouter(tags=["Payment intents"])
# Also served to in-process calls (the simulator's notifications in MOCK mode: app.py).
notifications_router = APIRouter(tags=["Checkout"])

MAX_FORM_BYTES = 16 * 1024


@router.post(
    "/v1/payment-intents/{payment_intent_id}/checkout",
    response_model=CheckoutResponse,
    responses=problem_responses(
        *MOVE_PROBLEMS,
        ConnectorNotConfigured,
        CurrencyNotSupported,
        ProviderError,
        ConnectorUnavailable,
    ),
    summary="Request a checkout (a hosted page at the chosen provider)",
)
async def request_checkout(
    payment_intent_id: str, call: FlowCallDep, body: CheckoutRequestBody | None = None
) -> Response:
    body = await optional_body(call.request, body, CheckoutRequestBody, '{} or {"provider": "auto"}')
    return flow_response(
        await service.request_checkout(
            call.runtime, call.phases, call.caller, payment_intent_id, body, call.scope(body)
        )
    )


@cancel_router.post(
    "/v1/payment-intents/{payment_intent_id}/cancel",
    response_model=PaymentIntentResponse,
    responses=problem_responses(
        *MOVE_PROBLEMS,
        ProviderError,
        ConnectorUnavailable,
    ),
    summary="Cancel a payment intent (CREATED or REQUIRES_ACTION); its checkout is stopped first",
)
async def cancel_payment_intent(
    payment_intent_id: str, call: FlowCallDep, body: CancelPaymentIntent | None = None
) -> Response:
    body = await optional_body(call.request, body, CancelPaymentIntent, '{} or {"reason": "out of stock"}')
    return flow_response(
        await cancel.cancel_intent(
            call.runtime, call.phases, call.caller, payment_intent_id, body.reason, call.scope(body)
        )
    )


async def _return(
    provider: str, payment_intent_id: str, request: Request
) -> Response:
    runtime = runtime_of(request)
    phases = runtime.phases
    params = dict(request.query_params)
    if request.method == "POST":
        raw = await request.body()
        if len(raw) > MAX_FORM_BYTES:
            raise ValidationFailed("The return form is too large.")
        form = await request.form()
        params.update({k: v for k, v in form.items() if isinstance(v, str)})
    location = await returns.handle_return(runtime, phases, provider, payment_intent_id, params)
    return RedirectResponse(location, status_code=303)


# Two routes, not one with two methods, so each gets its own OpenAPI operationId.
for _method in ("GET", "POST"):
    router.add_api_route(
        "/v1/checkout-returns/{provider}/{payment_intent_id}",
        _return,
        methods=[_method],
        name=f"checkout_return_{_method.lower()}",
        status_code=303,
        summary="The buyer's return from the provider (no API key): confirm, then 303 to return_url",
        responses={
            303: {"description": "To the intent's return_url with payment_intent_id (and status)"},
            # No such provider, or no such intent at it: the buyer's link is wrong.
            **problem_responses(ValidationFailed, ResourceNotFound),
        },
    )


@notifications_router.post(
    "/v1/provider-notifications/{provider}/{connector_id}",
    summary="A provider's signed notification (no API key): verified, then confirmed by reading",
    responses=problem_responses(ValidationFailed, ResourceNotFound, ConnectorUnavailable),
)
async def provider_notification(
    provider: str, connector_id: str, request: Request
) -> Response:
    runtime = runtime_of(request)
    phases = runtime.phases
    raw = await request.body()
    notification = IncomingNotification(
        headers={k.lower(): v for k, v in request.headers.items()},
        query=dict(request.query_params),
        body=raw,
    )
    await returns.handle_notification(runtime, phases, provider, connector_id, notification)
    return json_response({"received": True})
