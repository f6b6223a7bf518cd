"""Sandbox: "make a test payment" creates an intent, starts its checkout and opens the
simulator's page; the buyer's return lands on the intent's page in the dashboard."""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.applications import service as applications
from payorch.checkouts import service as checkouts
from payorch.checkouts.schemas import CheckoutRequestBody, CheckoutResponse
from payorch.dashboard.intent import typed_amount
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, field, render
from payorch.errors import InternalError, ResourceNotFound, ValidationFailed
from payorch.http.deps import ReadConn, runtime_of
from payorch.intents import service as intents
from payorch.intents.schemas import CreatePaymentIntent
from payorch.money import currency_problem
from payorch.providers import AUTO
from payorch.providers.registry import PROVIDER_IDS

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)


def _sandbox_only(viewer: Viewer) -> None:
    if not viewer.caller.is_sandbox:
        raise ResourceNotFound("Test payments are for sandbox applications.")


@router.get("/sandbox")
async def sandbox(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    _sandbox_only(viewer)
    merchants = await applications.list_merchants(conn, viewer.caller.application_id)
    return render(
        request, "sandbox.html", viewer, title="Sandbox", merchants=merchants, providers=PROVIDER_IDS
    )


@router.post("/sandbox")
async def test_payment(request: Request, viewer: ViewerDep, form: FormDep) -> Response:
    phases = runtime_of(request).phases
    _sandbox_only(viewer)
    runtime = viewer.runtime
    currency = field(form, "currency") or "CLP"
    problem = currency_problem(currency)
    if problem:  # before the amount: how many decimals it may have depends on the currency
        raise ValidationFailed.field("currency", problem)
    body = CreatePaymentIntent.model_validate(
        {
            "merchant_account_id": field(form, "merchant_account_id"),
            "external_reference": "test-" + secrets.token_hex(6),
            "amount": typed_amount(field(form, "amount"), currency),
            "currency": currency,
            "description": "Test payment from the dashboard",
            "provider": field(form, "provider") or AUTO,
            "return_url": runtime.settings.public_url + "/dashboard/sandbox/returned",
        }
    )
    async with phases.transaction() as conn:
        created = await intents.create_intent(conn, runtime.clock, viewer.caller, body)
    started = await checkouts.request_checkout(
        runtime, phases, viewer.caller, created.intent.id, CheckoutRequestBody(), None
    )
    if not isinstance(started, CheckoutResponse):  # only a request with a key gets a replay
        raise InternalError()
    action = started.checkout
    if action.method == "GET":
        return Response(status_code=303, headers={"Location": action.url})
    # A POST redirect: a form the buyer sends (dashboard.js sends it at once).
    return render(request, "checkout_post.html", viewer, title="To the simulator", action=action)


@router.get("/sandbox/returned")
async def returned(request: Request, viewer: ViewerDep) -> Response:
    """Where the simulator sends the buyer back: the intent's page."""
    intent_id = request.query_params.get("payment_intent_id", "")
    return back_to(request, f"/payments/{intent_id}" if intent_id.startswith("payi_") else "/payments")
