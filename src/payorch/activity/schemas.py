"""The activity log's request and response shapes: the list's query (also the export's and the
dashboard page's filters) and an entry as the API writes it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from payorch.activity.records import Entry, Filters
from payorch.clock import isoformat
from payorch.http.listing import CURSOR_HELP, Instant, PageQuery
from payorch.jsontypes import JsonObject

ACTION_PATTERN = r"^[a-z][a-z_]*(\.[a-z][a-z_]*)+$"


class WhoWhatFilters(BaseModel):
    """Who, what and which resource: each given filter must match (the list's and the export's)."""

    actor_id: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=64,
            description="Only this actor's entries (usr_..., key_... or a job's name).",
        ),
    ] = None
    action: Annotated[
        str | None,
        Field(max_length=64, pattern=ACTION_PATTERN, description="Only this action, such as refund.created."),
    ] = None
    resource_id: Annotated[
        str | None, Field(min_length=1, max_length=64, description="Only the entries about this resource.")
    ] = None


class ActivityFilters(WhoWhatFilters):
    """Which entries: each given filter must match; `from`/`to` are on the entry's `at`."""

    from_: Annotated[
        Instant | None,
        Field(alias="from", description="At or after; a date (UTC midnight) or an ISO 8601 timestamp."),
    ] = None
    to: Annotated[
        Instant | None, Field(description="Before (exclusive); a date or an ISO 8601 timestamp.")
    ] = None

    def of(self, application_id: str) -> Filters:
        return Filters(application_id, self.actor_id, self.action, self.resource_id, self.from_, self.to)


class ActivityListQuery(PageQuery, ActivityFilters):
    # An entry's position is its seq, the chain's order (docs/access.md, Activity log).
    cursor: Annotated[str | None, Field(pattern=r"^[0-9]{1,18}$", description=CURSOR_HELP)] = None


class ActivityActor(BaseModel):
    type: Literal["user", "api_key", "system"]
    id: str
    email: str | None = Field(description="A person's email; null for a key or the service.")


class ActivityResource(BaseModel):
    type: str
    id: str


class ActivityOrigin(BaseModel):
    ip: str | None
    user_agent: str | None


class ActivityEntry(BaseModel):
    id: str
    seq: int = Field(description="The entry's place in its application's chain: 1, 2, 3...")
    at: str
    actor: ActivityActor
    action: str
    resource: ActivityResource
    outcome: Literal["success", "failure"]
    origin: ActivityOrigin
    request_id: str | None
    changes: JsonObject = Field(description="What changed: names and safe values, never a secret.")
    hash: str = Field(description="SHA-256 of the entry's content and previous_hash (docs/access.md).")
    previous_hash: str


class ActivityList(BaseModel):
    items: list[ActivityEntry]
    next_cursor: str | None


def entry_body(entry: Entry) -> JsonObject:
    return {
        "id": entry.id,
        "seq": entry.seq,
        "at": isoformat(entry.at),
        "actor": {"type": entry.actor.type, "id": entry.actor.id, "email": entry.actor.email},
        "action": entry.action,
        "resource": {"type": entry.resource_type, "id": entry.resource_id},
        "outcome": entry.outcome,
        "origin": {"ip": entry.origin.ip, "user_agent": entry.origin.user_agent},
        "request_id": entry.origin.request_id,
        "changes": entry.changes,
        "hash": entry.hash,
        "previous_hash": entry.previous_hash,
    }
