"""Payment links in the dashboard: the list and the create form, a link's page (its URL to copy,
its QR code as SVG, its payments, deactivate). The rules are payorch.links.service's."""

from __future__ import annotations

import segno
from fastapi import APIRouter, Request
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.amount_text import UnreadableAmount, read_amount, rule
from payorch.applications import service as applications
from payorch.dashboard.keys import expiry_of
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, field, render
from payorch.errors import ValidationFailed
from payorch.http.deps import Conn, ListConn
from payorch.links import service
from payorch.links.records import LinkStatus
from payorch.links.schemas import CreatePaymentLink, DeactivatePaymentLink, LinkListQuery, link_url
from payorch.money import currency_problem

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)
CURRENCIES = ("CLP", "BRL", "MXN", "COP", "PEN", "ARS", "USD")  # the form's list; any ISO code works


def qr_svg(url: str) -> str:
    """The link's QR code as an SVG data URI (segno; the dashboard's CSP allows data: images)."""
    return str(segno.make(url, error="m").svg_data_uri(scale=4, border=2))


FIELDS = ("merchant_account_id", "description", "currency", "amount", "max_payments", "expires_at")
OPTIONAL = ("external_reference", "after_payment_url")


@router.get("/links")
async def links_page(request: Request, viewer: ViewerDep, conn: ListConn) -> Response:
    return await _page(request, viewer, conn)


async def _page(
    request: Request,
    viewer: Viewer,
    conn: AsyncConnection,
    refused: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
) -> Response:
    """The list and the create form; a refused form comes back with each field's problem beside
    it and what was typed kept (400), having changed nothing."""
    cursor = request.query_params.get("cursor") or None
    query = LinkListQuery.model_validate({"cursor": cursor} if cursor else {})
    page = await service.list_links(conn, viewer.runtime.clock, viewer.caller, query)
    merchants = await applications.list_merchants(conn, viewer.caller.application_id)
    currency = (typed or {}).get("currency") or "CLP"
    return render(
        request,
        "links.html",
        viewer,
        status_code=400 if refused else 200,
        title="Payment links",
        page=page,
        merchants=merchants,
        currencies=CURRENCIES,
        amount_rule=rule(currency) if currency_problem(currency) is None else rule("CLP"),
        refused=refused or {},
        typed=typed or {"max_payments": "1"},
    )


def _amount(form: FormData, currency: str) -> int:
    problem = currency_problem(currency)
    if problem:  # before the amount: how many decimals it may have depends on the currency
        raise ValidationFailed.field("currency", problem)
    try:
        return read_amount(field(form, "amount"), currency)
    except UnreadableAmount as refused:
        raise ValidationFailed.field("amount", str(refused)) from None


def _body(form: FormData) -> CreatePaymentLink:
    currency = field(form, "currency") or "CLP"
    max_payments = field(form, "max_payments") or "1"
    if not max_payments.isdigit():
        raise ValidationFailed.field("max_payments", "must be a whole number, 1 or more")
    optional = {name: field(form, name) for name in OPTIONAL}
    expires_at = expiry_of(form)
    return CreatePaymentLink.model_validate(
        {
            "merchant_account_id": field(form, "merchant_account_id"),
            "amount": _amount(form, currency),
            "currency": currency,
            "description": field(form, "description"),
            "max_payments": int(max_payments),
            **{name: value for name, value in optional.items() if value},
            **({"expires_at": expires_at} if expires_at else {}),
        }
    )


def _problems(exc: ValidationFailed | ValidationError) -> dict[str, str]:
    """Each field's first problem, by the form's field names."""
    if isinstance(exc, ValidationFailed):
        listed = [(str(e["field"]), str(e["message"])) for e in exc.details.get("errors", [])]
    else:
        listed = [(".".join(str(p) for p in e["loc"]) or "form", e["msg"]) for e in exc.errors()]
    problems: dict[str, str] = {}
    for name, message in listed:
        problems.setdefault(name if name in FIELDS + OPTIONAL else "form", message)
    return problems


@router.post("/links")
async def create_link(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    runtime = viewer.runtime
    try:
        body = _body(form)
        created = await service.create_link(
            conn, runtime.clock, viewer.caller, body, limit=runtime.settings.max_active_payment_links
        )
    except (ValidationFailed, ValidationError) as exc:  # refused before anything is written
        typed = {name: field(form, name) for name in FIELDS + OPTIONAL}
        return await _page(request, viewer, conn, _problems(exc), typed)
    return back_to(request, f"/links/{created.link.id}?notice=created")


@router.get("/links/{link_id}")
async def link_page(link_id: str, request: Request, viewer: ViewerDep, conn: Conn) -> Response:
    runtime = viewer.runtime
    detail = await service.read_link(conn, runtime.clock, viewer.caller, link_id)
    payments = await service.link_payments(conn, viewer.caller, link_id)
    url = link_url(runtime.settings.public_url, link_id)
    return render(
        request,
        "link.html",
        viewer,
        title=detail.link.description,
        detail=detail,
        url=url,
        qr=qr_svg(url),
        payments=payments,
        active=detail.link.status == LinkStatus.ACTIVE,
    )


@router.post("/links/{link_id}/deactivate")
async def deactivate(
    link_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    message = field(form, "message")
    body = DeactivatePaymentLink.model_validate({"message": message} if message else {})
    await service.deactivate_link(conn, viewer.runtime.clock, viewer.caller, link_id, body)
    return back_to(request, f"/links/{link_id}?notice=deactivated")
