"""Simulated provider D's row as a typed record."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from payorch.jsontypes import JsonObject


@dataclass(frozen=True, slots=True)
class SimDSession:
    id: str
    owner: str
    intent: str
    status: str
    refusals: int
    amount: int
    currency: str
    manual_capture: bool
    notification_url: str | None
    request: JsonObject
    session_result: str | None
    psp: str | None
    payment: str | None
    held: int
    captured: int
    refunded: int
    hold_ends_at: datetime | None
    expires_at: datetime
    created_at: datetime

    def status_at(self, now: datetime) -> str:
        """The session's status as the API shows it: an active one past ``expiresAt`` expired."""
        return "expired" if self.status == "active" and now >= self.expires_at else self.status

    @property
    def merchant_account(self) -> str:
        return str(self.request["merchantAccount"])

    @property
    def reference(self) -> str:
        return str(self.request["reference"])
