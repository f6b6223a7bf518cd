"""Webhook endpoints: create (the secret shown once), edit url and events, enable or disable,
send a test event, rotate the secret, delete, through the same services as
/v1/admin/webhook-endpoints."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.dashboard.paging import page_values
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, field, render
from payorch.events.types import EventType
from payorch.http.deps import Conn, ReadConn
from payorch.webhooks import service, tools
from payorch.webhooks.recover import recover_deliveries
from payorch.webhooks.schemas import (
    CreateWebhookEndpoint,
    EndpointListQuery,
    RecoverDeliveries,
    RotateWebhookSecret,
    UpdateWebhookEndpoint,
)

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

EVENT_TYPES = [t.value for t in EventType]
ENDPOINTS_SHOWN = 100  # an application has a handful of endpoints
# The rotation form's choices of overlap (seconds, label); the API takes any up to 7 days.
OVERLAPS = ((0, "none: the old secret stops now"), (3600, "1 hour"), (86400, "24 hours"), (604800, "7 days"))


def _events(form: FormData) -> list[str]:
    return [value for value in form.getlist("events") if isinstance(value, str)]


async def _check_url(viewer: Viewer, url: str) -> None:
    """The API's URL rules (before the first statement: no transaction open during DNS)."""
    runtime = viewer.runtime
    await service.check_url(
        url,
        viewer.caller.environment,
        runtime.webhook_resolver,
        sandbox_private=runtime.settings.sandbox_webhooks_private_allowed,
    )


@router.get("/webhooks")
async def endpoints(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    """A page of the API's list: ``cursor`` and ``limit`` as GET /v1/admin/webhook-endpoints
    (an application has at most PAYORCH_MAX_WEBHOOK_ENDPOINTS, ENDPOINTS_SHOWN a page by default)."""
    values = page_values(request)
    query = EndpointListQuery.model_validate({"limit": ENDPOINTS_SHOWN, **values})
    page = await service.list_endpoints(conn, viewer.caller, query.cursor, query.limit)
    return render(
        request,
        "webhooks.html",
        viewer,
        title="Webhooks",
        endpoints=page.items,
        next_cursor=page.next_cursor,
        first=query.cursor is None,
        limit=values.get("limit", ""),
        max_endpoints=viewer.runtime.settings.max_webhook_endpoints,
        event_types=EVENT_TYPES,
    )


@router.post("/webhooks")
async def create(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    body = CreateWebhookEndpoint.model_validate({"url": field(form, "url"), "events": _events(form)})
    await _check_url(viewer, body.url)
    runtime = viewer.runtime
    created, secret = await service.create_endpoint(
        conn,
        runtime.clock,
        runtime.cipher,
        viewer.caller,
        body,
        limit=runtime.settings.max_webhook_endpoints,
    )
    # Rendered, not redirected: the secret is in this answer only (Cache-Control: no-store).
    return render(
        request, "webhook_created.html", viewer, title="Endpoint created", endpoint=created, secret=secret
    )


@router.get("/webhooks/{endpoint_id}")
async def endpoint_page(endpoint_id: str, request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    endpoint = await service.get_endpoint(conn, viewer.caller, endpoint_id)
    return render(
        request,
        "webhook_endpoint.html",
        viewer,
        title="Webhook endpoint",
        endpoint=endpoint,
        event_types=EVENT_TYPES,
        recovered=request.query_params.get("recovered", ""),
        overlap_ends=tools.overlap_ends(endpoint, viewer.runtime.clock.now()),
        overlaps=OVERLAPS,
    )


@router.post("/webhooks/{endpoint_id}")
async def edit(endpoint_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    action = field(form, "action")
    if action in ("enable", "disable"):
        body = UpdateWebhookEndpoint(enabled=action == "enable")
    else:
        body = UpdateWebhookEndpoint.model_validate({"url": field(form, "url"), "events": _events(form)})
        await _check_url(viewer, body.url or "")
    await service.update_endpoint(conn, viewer.runtime.clock, viewer.caller, endpoint_id, body)
    return back_to(request, f"/webhooks/{endpoint_id}?notice={action or 'saved'}")


@router.post("/webhooks/{endpoint_id}/recover")
async def recover(
    endpoint_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    """Every failed delivery of the endpoint since a time gets a new schedule (the API's recover)."""
    body = RecoverDeliveries.model_validate(
        {"since": field(form, "since"), "include_failing": form.get("include_failing") == "on"}
    )
    recovered = await recover_deliveries(
        conn,
        viewer.runtime.clock,
        viewer.caller,
        endpoint_id=endpoint_id,
        since=body.since,
        include_failing=body.include_failing,
    )
    return back_to(request, f"/webhooks/{endpoint_id}?notice=recovered&recovered={recovered}")


@router.post("/webhooks/{endpoint_id}/delete")
async def delete(
    endpoint_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    await service.delete_endpoint(conn, viewer.runtime.clock, viewer.caller, endpoint_id)
    return back_to(request, "/webhooks")


@router.post("/webhooks/{endpoint_id}/test")
async def send_test(
    endpoint_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    """A webhook.test event to this endpoint only; shows its delivery (the API's POST .../test)."""
    delivery = await tools.send_test_event(conn, viewer.runtime.clock, viewer.caller, endpoint_id)
    return back_to(request, f"/webhooks/deliveries/{endpoint_id}/{delivery.id}?notice=test_sent")


@router.post("/webhooks/{endpoint_id}/rotate")
async def rotate(
    endpoint_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    """A new secret, shown once; the old one signs beside it for the chosen overlap."""
    body = RotateWebhookSecret.model_validate({"overlap_seconds": _seconds(form)})
    runtime = viewer.runtime
    rotated, secret = await tools.rotate_secret(
        conn, runtime.clock, runtime.cipher, viewer.caller, endpoint_id, overlap_seconds=body.overlap_seconds
    )
    # Rendered, not redirected: the secret is in this answer only (Cache-Control: no-store).
    return render(
        request,
        "webhook_created.html",
        viewer,
        title="Secret rotated",
        endpoint=rotated,
        secret=secret,
        overlap_ends=tools.overlap_ends(rotated, runtime.clock.now()),
        rotated=True,
    )


def _seconds(form: FormData) -> int:
    text = field(form, "overlap_seconds")
    return int(text) if text.isdigit() and len(text) < 10 else -1  # -1: the model's 400 page
