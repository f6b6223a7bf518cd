"""The outbox's records: one notification (a delivery), an attempt's outcome, and what a provider
declares to send them (its signer)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from payorch.crypto import Cipher
from payorch.jsontypes import JsonObject


@dataclass(frozen=True, slots=True)
class Notification:
    """One delivery of a notification (a row of simulator_notifications)."""

    id: str
    provider: str  # the simulator's name of the provider that sends it
    owner: str  # whose credentials made it: its signature uses the owner's secret
    subject: str  # the provider's object it is about (B: a payment id; C: a session id)
    url: str  # the full target, query included
    body: JsonObject
    status: str  # PENDING | DELIVERED | GAVE_UP
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Attempt:
    """The result of one delivery attempt, as recorded on the notification."""

    attempts: int
    last_error: str | None
    status: str | None = None  # None: still PENDING
    next_attempt_at: datetime | None = None  # None: unchanged


# (cipher, the notification, its body as sent, now) -> every header of the POST (the signature
# made at each attempt with the owner's secret; Content-Type too).
Signer = Callable[[Cipher, Notification, bytes, datetime], dict[str, str]]


def json_content(cipher: Cipher, notification: Notification, payload: bytes, now: datetime) -> dict[str, str]:
    """The signer of a provider whose signature is inside the body (its ``seal``): no header but
    the body's type."""
    return {"Content-Type": "application/json"}


def answered_2xx(status_code: int) -> bool:
    return 200 <= status_code < 300


@dataclass(frozen=True, slots=True)
class Notifier:
    """How one provider's notifications leave: declared once in its simulator package."""

    provider: str  # the simulator's name (SimulatedProvider.name)
    sign: Signer
    answer_seconds: float = 20.0  # how long the provider waits for an answer
    accepts: Callable[[int], bool] = answered_2xx  # which answers count as delivered
    # The body as sent, made at each attempt (a provider that signs inside the body: D's items);
    # None: the body as written.
    seal: Callable[[Cipher, Notification], JsonObject] | None = None
