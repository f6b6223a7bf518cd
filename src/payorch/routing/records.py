"""The routing domain's record: one saved version of a merchant's rules."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from payorch.jsontypes import JsonObject


@dataclass(frozen=True, slots=True)
class RoutingVersion:
    id: str
    application_id: str
    merchant_account_id: str
    version: int
    program: JsonObject  # a RoutingProgram's JSON (program.py), checked when it was saved
    active: bool
    created_at: datetime
    activated_at: datetime | None
