"""The payments list: GET /v1/payment-intents's filters, search by id or external reference,
cursor paging (the same listing the API uses)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.applications import service as applications
from payorch.dashboard.web import DashboardRoute, ViewerDep, back_to, render
from payorch.http.deps import ListConn
from payorch.intents import listing
from payorch.intents.schemas import IntentListQuery
from payorch.intents.states import IntentStatus
from payorch.providers.registry import PROVIDER_IDS

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

FILTERS = ("provider", "merchant_account_id", "external_reference", "from", "to", "cursor", "limit")


@router.get("/payments")
async def payments(request: Request, viewer: ViewerDep, conn: ListConn) -> Response:
    params = request.query_params
    search = params.get("q", "").strip()
    if search.startswith("payi_"):  # an intent id: its page (a 404 page if not this app's)
        return back_to(request, f"/payments/{search}")
    values: dict[str, object] = {
        name: params[name].strip() for name in FILTERS if params.get(name, "").strip()
    }
    if search:
        values["external_reference"] = search
    statuses = [s for s in params.getlist("status") if s]
    if statuses:
        values["status"] = statuses
    query = IntentListQuery.model_validate(values)  # a 400 page names what to fix
    page = await listing.list_intents(conn, viewer.caller, query)
    kept = [(k, v) for k, v in params.multi_items() if k != "cursor" and v]
    return render(
        request,
        "payments.html",
        viewer,
        title="Payments",
        page=page,
        params=params,
        kept=kept,
        statuses=[s.value for s in IntentStatus],
        chosen=set(statuses),
        merchants=await applications.list_merchants(conn, viewer.caller.application_id),
        providers=PROVIDER_IDS,
        filtered=bool(values.keys() - {"cursor"}),
    )
