"""The applications domain's records: the tenant and its merchant accounts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Application:
    id: str
    name: str
    environment: str  # SANDBOX | PRODUCTION
    created_at: datetime


@dataclass(frozen=True, slots=True)
class MerchantAccount:
    id: str
    application_id: str
    name: str
    created_at: datetime
