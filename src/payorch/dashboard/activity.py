"""The activity log's page: GET /v1/admin/activity's filters (actor, action, resource, from,
to) as labelled fields, newest first, paged by seq; a bad filter answers 400 with the form, its
values kept and the message beside the field; a download of the same filters (the activity
export)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.responses import Response

from payorch.activity import listing
from payorch.activity.schemas import ActivityListQuery
from payorch.dashboard.web import DashboardRoute, ViewerDep, render
from payorch.http.deps import ListConn

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

FILTERS = ("actor_id", "action", "resource_id", "from", "to")


@router.get("/activity")
async def activity(request: Request, viewer: ViewerDep, conn: ListConn) -> Response:
    params = request.query_params
    values = {
        name: params[name].strip() for name in (*FILTERS, "cursor", "limit") if params.get(name, "").strip()
    }
    problems: dict[str, str] = {}
    page = None
    try:
        query = ActivityListQuery.model_validate(values)
    except ValidationError as error:
        for item in error.errors():
            name = str(item["loc"][0]) if item["loc"] else ""
            problems.setdefault(
                name if name in FILTERS else "", item["msg"] if name in FILTERS else f"{name}: {item['msg']}"
            )
    if not problems:
        page = await listing.list_entries(conn, viewer.caller, query)
    kept = [(k, values[k]) for k in FILTERS if k in values]
    return render(
        request,
        "activity.html",
        viewer,
        status_code=400 if problems else 200,
        title="Activity",
        page=page,
        problems=problems,
        params=params,
        kept=kept,
        filtered=bool(kept),
    )
