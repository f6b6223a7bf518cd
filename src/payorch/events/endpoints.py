"""HTTP of the events domain: the application's events, so a consumer can recover what it missed."""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from starlette.responses import Response

from payorch.events import service
from payorch.events.types import EventType
from payorch.http.deps import CurrentCaller, ListConn
from payorch.http.listing import CURSOR_HELP, PageQuery, list_route
from payorch.jsontypes import JsonObject

router = APIRouter(tags=["Events"])


class EventListQuery(PageQuery):
    # An event's position is its sequence number (the list's order), which fits a signed 64-bit int.
    cursor: Annotated[str | None, Field(pattern=r"^[0-9]{1,18}$", description=CURSOR_HELP)] = None
    type: Annotated[EventType | None, Field(description="Only events of this type.")] = None
    payment_intent_id: Annotated[
        str | None, Field(max_length=40, description="Only this intent's events.")
    ] = None


class EventList(BaseModel):
    items: list[JsonObject]
    next_cursor: str | None


@list_route(
    router,
    "/v1/events",
    model=EventList,
    summary="List the application's events, newest first",
    description="Each item is the exact body that webhook deliveries of that event send.",
)
async def list_events(
    caller: CurrentCaller, conn: ListConn, query: Annotated[EventListQuery, Query()]
) -> Response:
    page = await service.list_events(
        conn,
        caller.application_id,
        type=query.type,
        payment_intent_id=query.payment_intent_id,
        cursor=query.cursor,
        limit=query.limit,
    )
    # The stored bodies are already JSON: splice them in rather than parse and re-serialize.
    body = (
        b'{"items":['
        + b",".join(item.payload.encode() for item in page.items)
        + b'],"next_cursor":'
        + orjson.dumps(page.next_cursor)
        + b"}"
    )
    return Response(body, media_type="application/json")
