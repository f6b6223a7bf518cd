"""The query of every list endpoint, declared once.

Each list takes one query model (``Annotated[SomeQuery, Query()]``) built on the models below.
``extra="forbid"`` makes an unknown parameter a 400 VALIDATION_ERROR naming it, so a typo
(``/v1/events?payment_intent=...``) is refused instead of silently returning everything; the
cursor, limit and time bounds are checked the same way everywhere, and the OpenAPI document
states each constraint (pattern, bounds, enums).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter
from fastapi.types import DecoratedCallable
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from payorch.errors import ApiError, AuthenticationFailed, ValidationFailed
from payorch.http.errors import problem_responses
from payorch.ids import id_pattern

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
# A cursor is the position of the previous page's last item (its id, or an event's sequence
# number): every string the list's documented pattern admits is a valid position, anything else is
# a 400 naming `cursor`. Clients are told to pass `next_cursor` back unchanged (docs/api.md).
CURSOR_HELP = "`next_cursor` of the previous page, passed back unchanged."


class NoQuery(BaseModel):
    """A list that takes no parameter: any parameter is unknown."""

    model_config = ConfigDict(extra="forbid")


class PageQuery(NoQuery):
    """A page of a list; each list declares its own `cursor` (``IdCursor`` or a pattern of its own)."""

    limit: Annotated[
        int, Field(ge=1, le=MAX_LIMIT, description=f"Page size, 1 to {MAX_LIMIT}.")
    ] = DEFAULT_LIMIT


def id_cursor(prefix: str) -> FieldInfo:
    """The `cursor` of a list of ``prefix`` ids, the previous page's last id; use it as
    ``cursor: Annotated[str | None, id_cursor("pay")] = None``."""
    return FieldInfo(pattern=id_pattern(prefix), description=CURSOR_HELP)


def _instant(value: object) -> object:
    """A date (midnight UTC) or an ISO 8601 timestamp; one without a zone is taken as UTC."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            raise PydanticCustomError(
                "instant",
                "must be a date (2026-11-22) or an ISO 8601 timestamp (2026-11-22T10:00:00Z)",
            ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


Instant = Annotated[
    datetime,
    BeforeValidator(_instant),
    WithJsonSchema(
        {"type": "string", "anyOf": [{"format": "date"}, {"format": "date-time"}]},
        mode="validation",
    ),
]


class CreatedRangeQuery(PageQuery):
    """A page of a list that can be narrowed to a creation time range."""

    from_: Annotated[
        Instant | None,
        Field(
            alias="from",
            description="Created at or after; a date (UTC midnight) or an ISO 8601 timestamp.",
        ),
    ] = None
    to: Annotated[
        Instant | None,
        Field(description="Created before (exclusive); a date or an ISO 8601 timestamp."),
    ] = None


def list_route(
    router: APIRouter,
    path: str,
    *,
    model: type[BaseModel],
    summary: str,
    description: str | None = None,
    also: tuple[type[ApiError], ...] = (),
) -> Callable[[DecoratedCallable], DecoratedCallable]:
    """The GET of a list. Every list answers 400 for an unknown parameter or a bad value (its
    query model above) and 401 without a key; ``also`` adds what this list can answer besides."""
    return router.get(
        path,
        response_model=model,
        responses=problem_responses(ValidationFailed, AuthenticationFailed, *also),
        summary=summary,
        description=description,
    )
