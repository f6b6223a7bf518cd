"""HTTP of the events domain: the application's events, so a consumer can recover what it missed."""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Query
from pydantic import BaseModel
from starlette.responses import Response

from payorch import pagination
from payorch.errors import AuthenticationFailed, ValidationFailed
from payorch.events import service
from payorch.http.deps import Conn, CurrentCaller
from payorch.http.errors import problem_responses
from payorch.jsontypes import JsonObject

router = APIRouter(tags=["Events"])


class EventList(BaseModel):
    items: list[JsonObject]
    next_cursor: str | None


@router.get(
    "/v1/events",
    response_model=EventList,
    responses=problem_responses(ValidationFailed, AuthenticationFailed),
    summary="List the application's events, newest first",
    description="Each item is the exact body that webhook deliveries of that event send.",
)
async def list_events(
    caller: CurrentCaller,
    conn: Conn,
    type: Annotated[
        str | None, Query(description="An event type, e.g. payment.authorized.")
    ] = None,
    payment_intent_id: Annotated[str | None, Query(max_length=40)] = None,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=pagination.MAX_LIMIT)] = pagination.DEFAULT_LIMIT,
) -> Response:
    page = await service.list_events(
        conn,
        caller.application_id,
        type=type,
        payment_intent_id=payment_intent_id,
        cursor=cursor,
        limit=limit,
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
