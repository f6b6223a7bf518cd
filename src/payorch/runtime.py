"""What a process holds for its whole life: settings, clock, database, cipher and shared services.

Built once by ``create_app`` (API) or ``payorch worker``; tests build it with their own clock
and database. Domain code receives the pieces it needs, never a global.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from payorch.auth.service import Authenticator
from payorch.clock import Clock, SystemClock
from payorch.config import Settings
from payorch.crypto import Cipher, load_cipher
from payorch.db import Database
from payorch.idempotency.service import Idempotency


@dataclass
class Runtime:
    settings: Settings
    clock: Clock
    database: Database
    cipher: Cipher
    authenticator: Authenticator
    idempotency: Idempotency
    owns_database: bool = field(default=True)

    @classmethod
    def build(
        cls, settings: Settings, *, clock: Clock | None = None, database: Database | None = None
    ) -> Runtime:
        clock = clock or SystemClock()
        owns = database is None
        database = database or Database(settings.database_url)
        return cls(
            settings=settings,
            clock=clock,
            database=database,
            cipher=load_cipher(settings),
            authenticator=Authenticator(database),
            idempotency=Idempotency(database, clock, settings.idempotency_ttl_seconds),
            owns_database=owns,
        )

    async def close(self) -> None:
        if self.owns_database:
            await self.database.dispose()
