"""The hash chain: each entry's hash is the SHA-256 of its content, in one canonical JSON form,
and of the previous entry's hash. Changing, removing or reordering an entry breaks the chain at
that entry; ``payorch activity verify`` walks it."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from payorch.activity.records import Actor, Entry, Origin
from payorch.clock import isoformat
from payorch.jsontypes import JsonObject

GENESIS = "0" * 64  # the previous hash of an application's first entry


def content_hash(
    *,
    previous_hash: str,
    id: str,
    application_id: str,
    seq: int,
    at: datetime,
    actor: Actor,
    action: str,
    resource_type: str,
    resource_id: str,
    outcome: str,
    origin: Origin,
    changes: JsonObject,
) -> str:
    content = {
        "previous_hash": previous_hash,
        "id": id,
        "application_id": application_id,
        "seq": seq,
        "at": isoformat(at),
        "actor": {"type": actor.type, "id": actor.id, "email": actor.email},
        "action": action,
        "resource": {"type": resource_type, "id": resource_id},
        "outcome": outcome,
        "origin": {"ip": origin.ip, "user_agent": origin.user_agent, "request_id": origin.request_id},
        "changes": changes,
    }
    # Sorted keys, no spaces, UTF-8: the same entry always hashes the same, on any database.
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def entry_hash(entry: Entry, seq: int | None = None) -> str:
    """The hash ``entry`` should carry (with ``seq`` instead of its own, to test a reordering)."""
    return content_hash(
        previous_hash=entry.previous_hash,
        id=entry.id,
        application_id=entry.application_id,
        seq=entry.seq if seq is None else seq,
        at=entry.at,
        actor=entry.actor,
        action=entry.action,
        resource_type=entry.resource_type,
        resource_id=entry.resource_id,
        outcome=entry.outcome,
        origin=entry.origin,
        changes=entry.changes,
    )
