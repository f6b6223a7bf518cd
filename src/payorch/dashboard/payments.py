"""The payments list: GET /v1/payment-intents's filters, search by id or external reference,
cursor paging (the same listing the API uses). A bad filter answers 400 with the same form, its
values kept and the message beside the field."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.datastructures import QueryParams
from starlette.responses import Response

from payorch.applications import service as applications
from payorch.dashboard.web import DashboardRoute, ViewerDep, back_to, render
from payorch.http.deps import ListConn
from payorch.intents import listing
from payorch.intents.schemas import IntentListQuery
from payorch.intents.states import IntentStatus
from payorch.payments import hold_reads
from payorch.payments.hold_repository import HELD
from payorch.providers.registry import PROVIDER_IDS

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

FILTERS = ("provider", "merchant_account_id", "external_reference", "from", "to", "cursor", "limit")
STATUSES = tuple(s.value for s in IntentStatus)
# The form's control for each query field; the rest (cursor, limit) are said above the form.
CONTROL_OF = {"external_reference": "q", "status": "status", "provider": "provider"}
CONTROL_OF |= {"merchant_account_id": "merchant_account_id", "from": "from", "to": "to"}


def query_values(params: QueryParams) -> dict[str, object]:
    """The list query's fields from the page's query string (the search box is the reference)."""
    values: dict[str, object] = {
        name: params[name].strip() for name in FILTERS if params.get(name, "").strip()
    }
    if search := params.get("q", "").strip():
        values["external_reference"] = search
    if statuses := [s for s in params.getlist("status") if s]:
        values["status"] = statuses
    return values


def unknown_choices(values: dict[str, object], merchants: set[str]) -> dict[str, str]:
    """A value that no option of its select has (typed into the URL): the message per control."""
    problems = {}
    if values.get("provider", PROVIDER_IDS[0]) not in PROVIDER_IDS:
        problems["provider"] = f"{values['provider']} is not a provider: choose one from the list."
    statuses = values.get("status")
    wrong = [s for s in statuses if s not in STATUSES] if isinstance(statuses, list) else []
    if wrong:
        problems["status"] = f"{wrong[0]} is not an intent status: choose one from the list."
    if "merchant_account_id" in values and values["merchant_account_id"] not in merchants:
        problems["merchant_account_id"] = (
            "No merchant of this application has this id: choose one from the list."
        )
    return problems


def problems_of(error: ValidationError) -> dict[str, str]:
    """The query model's complaints, one per form control ('' for those without one)."""
    problems: dict[str, str] = {}
    for item in error.errors():
        name = str(item["loc"][0]) if item["loc"] else ""
        control = CONTROL_OF.get(name, "")
        problems.setdefault(control, item["msg"] if control else f"{name}: {item['msg']}")
    return problems


@router.get("/payments")
async def payments(request: Request, viewer: ViewerDep, conn: ListConn) -> Response:
    params = request.query_params
    search = params.get("q", "").strip()
    if search.startswith("payi_"):  # an intent id: its page (a 404 page if not this app's)
        return back_to(request, f"/payments/{search}")
    values = query_values(params)
    merchants = await applications.list_merchants(conn, viewer.caller.application_id)
    problems = unknown_choices(values, {m.id for m in merchants})
    page = None
    try:
        query = IntentListQuery.model_validate(values)
    except ValidationError as error:
        problems = problems_of(error) | problems
    deadlines: dict[str, datetime] = {}
    if not problems:
        page = await listing.list_intents(conn, viewer.caller, query)
        held = [intent.id for intent in page.items if intent.status == HELD]
        deadlines = await hold_reads.deadlines(conn, viewer.caller.application_id, held)
    kept = [(k, v) for k, v in params.multi_items() if k != "cursor" and v]
    return render(
        request,
        "payments.html",
        viewer,
        status_code=400 if problems else 200,
        title="Payments",
        page=page,
        problems=problems,
        params=params,
        kept=kept,
        statuses=STATUSES,
        chosen=set(params.getlist("status")),
        merchants=merchants,
        providers=PROVIDER_IDS,
        filtered=bool(values.keys() - {"cursor"}),
        deadlines=deadlines,  # "capture by" of the held intents of the page
        now=viewer.runtime.clock.now(),
    )
