"""The connectors domain's record: one merchant's configuration of one provider."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from payorch.providers.base import Mode


@dataclass(frozen=True, slots=True)
class Connector:
    id: str
    application_id: str
    merchant_account_id: str
    provider: str
    mode: Mode
    enabled: bool
    priority: int
    # The Fernet token of the JSON credentials (checked by providers/credentials.py, encrypted
    # with runtime.cipher in connectors/service.py); never returned.
    encrypted_credentials: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def has_credentials(self) -> bool:
        return self.encrypted_credentials is not None
