"""Webhook deliveries: the list with the API's filters, each delivery's attempts, retry one."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.dashboard.web import DashboardRoute, FormDep, ViewerDep, back_to, render
from payorch.dashboard.webhooks import ENDPOINTS_SHOWN, EVENT_TYPES
from payorch.http.deps import Conn, ListConn, ReadConn
from payorch.webhooks import service, tools
from payorch.webhooks.schemas import DeliveryListQuery

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

FILTERS = ("endpoint_id", "event_type", "payment_intent_id", "from", "to", "cursor", "limit")
STATUSES = ("PENDING", "SUCCEEDED", "EXHAUSTED")


@router.get("/webhooks/deliveries")
async def deliveries(request: Request, viewer: ViewerDep, conn: ListConn) -> Response:
    params = request.query_params
    values: dict[str, object] = {
        name: params[name].strip() for name in FILTERS if params.get(name, "").strip()
    }
    statuses = [s for s in params.getlist("status") if s]
    if statuses:
        values["status"] = statuses
    query = DeliveryListQuery.model_validate(values)  # a 400 page names what to fix
    page = await service.list_deliveries(conn, viewer.caller, query)
    endpoints = await service.list_endpoints(conn, viewer.caller, None, ENDPOINTS_SHOWN)
    return render(
        request,
        "deliveries.html",
        viewer,
        title="Webhook deliveries",
        page=page,
        params=params,
        kept=[(k, v) for k, v in params.multi_items() if k != "cursor" and v],
        statuses=STATUSES,
        chosen=set(statuses),
        event_types=EVENT_TYPES,
        endpoints=endpoints.items,
        filtered=bool(values.keys() - {"cursor", "limit"}),
    )


@router.get("/webhooks/deliveries/{endpoint_id}/{delivery_id}")
async def delivery_page(
    endpoint_id: str, delivery_id: str, request: Request, viewer: ViewerDep, conn: ReadConn
) -> Response:
    delivery, attempts = await service.get_delivery(conn, viewer.caller, endpoint_id, delivery_id)
    sent = await tools.sent_event(conn, delivery.event_id)
    return render(
        request,
        "delivery.html",
        viewer,
        title="Webhook delivery",
        delivery=delivery,
        attempts=attempts,
        sent=sent,
        # Indented to read; the signed bytes are the compact form (the API's `payload`).
        payload=orjson.dumps(orjson.loads(sent.payload), option=orjson.OPT_INDENT_2).decode(),
        is_test=delivery.event_type == tools.TEST_EVENT_TYPE,
    )


@router.post("/webhooks/deliveries/{endpoint_id}/{delivery_id}/retry")
async def retry(
    endpoint_id: str, delivery_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    await service.retry_delivery(conn, viewer.runtime.clock, viewer.caller, endpoint_id, delivery_id)
    return back_to(request, f"/webhooks/deliveries/{endpoint_id}/{delivery_id}?notice=retried")
