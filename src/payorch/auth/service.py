"""Authenticate a request's bearer key, with a small cache so most requests skip the database.

Revocation: ``forget(prefix)`` drops the entry on this process at once; other processes see it
within CACHE_SECONDS, when their entry expires.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from payorch.auth import keys, repository
from payorch.db import Phases
from payorch.errors import AuthenticationFailed

CACHE_SECONDS = 5.0
OPERATOR = "operator"  # the credential id of the command line's caller and the service's own jobs
CACHE_MAX_ENTRIES = 10_000


@dataclass(frozen=True)
class Caller:
    """Who is calling: every query is scoped to ``application_id``.

    A key (``credential_id``) or a signed-in person (``user_id``, with their role's scopes);
    ``scopes`` None means every scope (a key made without a list). The service's own jobs and
    the operator's command line act as ``credential_id`` "operator" with every scope.
    """

    application_id: str
    environment: str  # SANDBOX | PRODUCTION
    credential_id: str  # the key's id; "" for a person
    scopes: frozenset[str] | None = None
    user_id: str | None = None
    email: str | None = None

    @property
    def is_sandbox(self) -> bool:
        return self.environment == "SANDBOX"

    def permits(self, scope: str) -> bool:
        return self.scopes is None or scope in self.scopes


@dataclass(frozen=True)
class _Entry:
    caller: Caller
    secret_hash: str
    revoked: bool
    expires: float


class Authenticator:
    def __init__(self, phases: Phases) -> None:
        self._phases = phases  # a cache miss reads the key in its own short read
        self._cache: dict[str, _Entry] = {}

    async def authenticate(self, authorization: str | None) -> Caller:
        if not authorization or not authorization.startswith("Bearer "):
            raise AuthenticationFailed()
        parsed = keys.parse(authorization[7:].strip())
        if parsed is None:
            raise AuthenticationFailed("The API key is malformed.")
        entry = await self._entry(parsed.prefix)
        # Compare even when the entry is missing, so timing says nothing about which prefixes exist.
        stored = entry.secret_hash if entry else "0" * 64
        matches = keys.secret_matches(parsed.secret, stored)
        if entry is None or not matches or entry.revoked:
            raise AuthenticationFailed("The API key is unknown or revoked.")
        if entry.caller.environment != parsed.environment:
            raise AuthenticationFailed("The API key is unknown or revoked.")
        return entry.caller

    def forget(self, prefix: str) -> None:
        self._cache.pop(prefix, None)

    async def _entry(self, prefix: str) -> _Entry | None:
        now = time.monotonic()
        entry = self._cache.get(prefix)
        if entry is not None and entry.expires > now:
            return entry
        async with self._phases.reading() as conn:
            holder = await repository.find_by_prefix(conn, prefix)
        if holder is None:
            return None
        entry = _Entry(
            Caller(holder.application_id, holder.environment, holder.credential_id),
            holder.secret_hash,
            holder.revoked,
            now + CACHE_SECONDS,
        )
        if len(self._cache) >= CACHE_MAX_ENTRIES:
            self._cache.clear()
        self._cache[prefix] = entry
        return entry
