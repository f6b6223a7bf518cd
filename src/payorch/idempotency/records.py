"""Typed records of idempotency keys: what is stored under a key, and what a write puts there."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class KeyState:
    """The columns a claim or a stored answer writes under a key (all but the key itself)."""

    fingerprint: str
    state: str  # IN_PROGRESS | COMPLETED
    locked_until: datetime
    response_status: int | None
    response_body: str | None  # the JSON answer, as text
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    application_id: str
    operation: str  # "POST /v1/payment-intents"
    key: str
    fingerprint: str
    state: str
    locked_until: datetime
    response_status: int | None
    response_body: str | None
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class IdempotentResult:
    """The answer of an operation run under a key: rendered by payorch.http.responses."""

    status: int
    body: bytes  # JSON
    replayed: bool = False  # True: the stored answer of an earlier request with the same key
