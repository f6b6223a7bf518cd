"""The activity domain's records."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from payorch.jsontypes import JsonObject

ActorType = Literal["user", "api_key", "system"]


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acted: a person (``usr_...``, with their email), a key (its ``key_...`` id) or the
    service itself (``system``: ``id`` names the job, such as "reconciliation")."""

    type: ActorType
    id: str
    email: str | None = None


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the request came from; all None for the service's own jobs."""

    ip: str | None = None
    user_agent: str | None = None
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One change to log: ``changes`` names what changed, with safe values only, never a secret
    or a credential (a rotated secret is {"secret": "rotated"})."""

    application_id: str
    actor: Actor
    action: str  # resource.verb_in_past: "refund.created", "user.role_changed"
    resource_type: str
    resource_id: str
    origin: Origin = Origin()
    outcome: Literal["success", "failure"] = "success"
    changes: JsonObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Entry:
    """A written entry: the change, its place in the chain and its hash."""

    id: str
    application_id: str
    seq: int
    at: datetime
    actor: Actor
    action: str
    resource_type: str
    resource_id: str
    outcome: str
    origin: Origin
    changes: JsonObject
    previous_hash: str
    hash: str


@dataclass(frozen=True, slots=True)
class Filters:
    """Which of one application's entries a list or an export reads: each given field must
    match; ``from_`` inclusive, ``to`` exclusive, on ``at``."""

    application_id: str
    actor_id: str | None = None
    action: str | None = None
    resource_id: str | None = None
    from_: datetime | None = None
    to: datetime | None = None


@dataclass(frozen=True, slots=True)
class Head:
    """Where an application's chain ends: its last entry's seq and hash (GENESIS and 0 before
    any entry)."""

    application_id: str
    seq: int
    hash: str
