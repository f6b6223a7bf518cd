"""Sandbox: "make a test payment" creates an intent, starts its checkout and opens the
simulator's page; the buyer's return lands on the intent's page in the dashboard."""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.amount_text import UnreadableAmount, read_amount
from payorch.applications import service as applications
from payorch.checkouts import service as checkouts
from payorch.checkouts.schemas import CheckoutRequestBody, CheckoutResponse
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, field, render
from payorch.errors import ApiError, InternalError, ResourceNotFound, ValidationFailed
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


# The form's controls; a problem with any other field of the intent is told above the form.
_CONTROLS = ("merchant_account_id", "amount", "currency", "provider")
_PROVIDER_CODES = ("CONNECTOR_NOT_CONFIGURED", "CURRENCY_NOT_SUPPORTED")  # shown at the provider control


@router.get("/sandbox")
async def sandbox(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    _sandbox_only(viewer)
    return await _form(request, viewer, conn)


async def _form(
    request: Request,
    viewer: Viewer,
    conn: AsyncConnection,
    typed: FormData | None = None,
    problems: dict[str, str] | None = None,
) -> Response:
    """The form; with ``problems``, answered 400 with what was typed and each message beside its
    field (nothing was created)."""
    merchants = await applications.list_merchants(conn, viewer.caller.application_id)
    return render(
        request,
        "sandbox.html",
        viewer,
        status_code=400 if problems else 200,
        title="Sandbox",
        merchants=merchants,
        providers=PROVIDER_IDS,
        typed={name: field(typed, name) for name in _CONTROLS} if typed else {},
        problems=problems or {},
    )


def _problems(error: ApiError | ValidationError) -> dict[str, str]:
    """One message per form control ('' for the rest), from a refusal of the intent."""
    if isinstance(error, ValidationError):
        listed = [(str(item["loc"][0]) if item["loc"] else "", item["msg"]) for item in error.errors()]
    elif isinstance(error, ValidationFailed):
        listed = [(str(item["field"]), str(item["message"])) for item in error.details.get("errors", [])]
    else:
        listed = [("provider" if error.code in _PROVIDER_CODES else "", error.message)]
    problems: dict[str, str] = {}
    for name, message in listed or [("", error.message if isinstance(error, ApiError) else "")]:
        control = name if name in _CONTROLS else ""
        problems.setdefault(control, message if control else f"{name}: {message}".lstrip(": "))
    return problems


def _amount(text: str, currency: str) -> int:
    try:
        return read_amount(text, currency)
    except UnreadableAmount as refused:
        raise ValidationFailed.field("amount", str(refused)) from None


@router.post("/sandbox")
async def test_payment(request: Request, viewer: ViewerDep, form: FormDep) -> Response:
    phases = runtime_of(request).phases
    _sandbox_only(viewer)
    runtime = viewer.runtime
    currency = field(form, "currency") or "CLP"
    try:
        problem = currency_problem(currency)
        if problem:  # before the amount: how many decimals it may have depends on the currency
            raise ValidationFailed.field("currency", problem)
        body = CreatePaymentIntent.model_validate(
            {
                "merchant_account_id": field(form, "merchant_account_id"),
                "external_reference": "test-" + secrets.token_hex(6),
                "amount": _amount(field(form, "amount"), currency),
                "currency": currency,
                "description": "Test payment from the dashboard",
                "provider": field(form, "provider") or AUTO,
                "return_url": runtime.settings.public_url + "/dashboard/sandbox/returned",
            }
        )
        async with phases.transaction() as conn:
            created = await intents.create_intent(conn, runtime.clock, viewer.caller, body)
    except (ApiError, ValidationError) as refused:
        async with phases.reading() as conn:
            return await _form(request, viewer, conn, form, _problems(refused))
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
