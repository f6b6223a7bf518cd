"""Payment links in the dashboard: the list and the create form, a link's page (its URL to copy,
its QR code as SVG, its payments, deactivate). The rules are payorch.links.service's."""

from __future__ import annotations

import segno
from fastapi import APIRouter, Request
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.amount_text import UnreadableAmount, read_amount, rule
from payorch.applications import service as applications
from payorch.dashboard.keys import expiry_of
from payorch.dashboard.web import DashboardRoute, FormDep, ViewerDep, back_to, field, render
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


@router.get("/links")
async def links_page(request: Request, viewer: ViewerDep, conn: ListConn) -> Response:
    runtime = viewer.runtime
    cursor = request.query_params.get("cursor") or None
    query = LinkListQuery.model_validate({"cursor": cursor} if cursor else {})
    page = await service.list_links(conn, runtime.clock, viewer.caller, query)
    merchants = await applications.list_merchants(conn, viewer.caller.application_id)
    return render(
        request,
        "links.html",
        viewer,
        title="Payment links",
        page=page,
        merchants=merchants,
        currencies=CURRENCIES,
        amount_rule=rule("CLP"),
    )


def _amount(form: FormData, currency: str) -> int:
    problem = currency_problem(currency)
    if problem:  # before the amount: how many decimals it may have depends on the currency
        raise ValidationFailed.field("currency", problem)
    try:
        return read_amount(field(form, "amount"), currency)
    except UnreadableAmount as refused:
        raise ValidationFailed.field("amount", str(refused)) from None


@router.post("/links")
async def create_link(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    runtime = viewer.runtime
    currency = field(form, "currency") or "CLP"
    max_payments = field(form, "max_payments") or "1"
    if not max_payments.isdigit():
        raise ValidationFailed.field("max_payments", "must be a whole number, 1 or more")
    optional = {name: field(form, name) for name in ("external_reference", "after_payment_url")}
    expires_at = expiry_of(form)
    body = CreatePaymentLink.model_validate(
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
    created = await service.create_link(
        conn, runtime.clock, viewer.caller, body, limit=runtime.settings.max_active_payment_links
    )
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
