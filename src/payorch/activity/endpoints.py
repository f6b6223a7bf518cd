"""HTTP of the activity log: GET /v1/admin/activity, the application's entries, newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from payorch.activity import listing
from payorch.activity.schemas import ActivityList, ActivityListQuery, entry_body
from payorch.errors import Forbidden
from payorch.http.deps import CurrentCaller, ListConn
from payorch.http.listing import list_route
from payorch.http.responses import json_response

router = APIRouter(tags=["Activity"])


@list_route(
    router,
    "/v1/admin/activity",
    model=ActivityList,
    summary="List the application's activity log, newest first",
    description="Who changed what, when, from where and with what outcome: one entry per change "
    "by a person, a key or the service, each chained to the one before by its hash (verify with "
    "`payorch activity verify`; the hash rule is in docs/access.md). Paged by `seq`, the chain's "
    "order. Needs the `activity:read` scope.",
    also=(Forbidden,),
)
async def list_activity(
    caller: CurrentCaller, conn: ListConn, query: Annotated[ActivityListQuery, Query()]
) -> Response:
    page = await listing.list_entries(conn, caller, query)
    return json_response(
        {"items": [entry_body(entry) for entry in page.items], "next_cursor": page.next_cursor}
    )
