"""Authenticate a request's bearer key, with a small cache so most requests skip the database.

Revocation: ``forget(prefix)`` drops the entry on this process at once; other processes see it
within CACHE_SECONDS, when their entry expires. A key past its ``expires_at`` is refused as a
revoked one is.

Last use: a key's ``last_used_at`` is written at most once every TOUCH_SECONDS, by a task of its
own after the request was let through (the request never waits for it), and only if the stored
time is older (another process may have written it).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from payorch.auth import keys, repository
from payorch.clock import Clock, isoformat
from payorch.db import Phases
from payorch.errors import AuthenticationFailed

log = logging.getLogger("payorch.auth")

CACHE_SECONDS = 5.0
OPERATOR = "operator"  # the credential id of the command line's caller and the service's own jobs
CACHE_MAX_ENTRIES = 10_000
TOUCH_SECONDS = 60.0


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
    expires: float  # of this cache entry (monotonic)
    key_expires_at: datetime | None  # of the key itself
    last_used_at: datetime | None  # as stored when read


class Authenticator:
    def __init__(self, phases: Phases, clock: Clock) -> None:
        self._phases = phases  # a cache miss reads the key in its own short read
        self._clock = clock
        self._cache: dict[str, _Entry] = {}
        # Each key's last use as this process wrote it (its write may not have committed when
        # the key is read again).
        self._used: dict[str, datetime] = {}
        self._touching: set[asyncio.Task[None]] = set()

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
        now = self._clock.now()
        if entry.key_expires_at is not None and entry.key_expires_at <= now:
            raise AuthenticationFailed(f"The API key expired at {isoformat(entry.key_expires_at)}.")
        credential_id = entry.caller.credential_id
        last = self._used.get(credential_id, entry.last_used_at)
        if entry.last_used_at is not None and last is not None:
            last = max(last, entry.last_used_at)
        if last is None or (now - last).total_seconds() >= TOUCH_SECONDS:
            self._touch(credential_id, now)
        return entry.caller

    def forget(self, prefix: str) -> None:
        self._cache.pop(prefix, None)

    def _touch(self, credential_id: str, now: datetime) -> None:
        if len(self._used) >= CACHE_MAX_ENTRIES:
            self._used.clear()
        self._used[credential_id] = now  # the next requests skip this at once
        before = now - timedelta(seconds=TOUCH_SECONDS)
        write = self._write_use(credential_id, now, before)
        # A context of its own: nothing of the request's (its retry state, its log fields).
        task = asyncio.create_task(write, context=contextvars.Context())
        self._touching.add(task)
        task.add_done_callback(self._touching.discard)

    async def _write_use(self, credential_id: str, at: datetime, before: datetime) -> None:
        try:
            async with self._phases.each_statement() as conn:
                await repository.touch(conn, credential_id, at, before)
        except Exception:  # noqa: BLE001 - a lost time of use is not worth failing anything
            log.warning("could not record the last use of API key %s", credential_id, exc_info=True)

    async def drain(self) -> None:
        """Wait for the last-use writes under way (before the database is disposed of)."""
        if self._touching:
            await asyncio.gather(*self._touching, return_exceptions=True)

    async def _entry(self, prefix: str) -> _Entry | None:
        now = time.monotonic()
        entry = self._cache.get(prefix)
        if entry is not None and entry.expires > now:
            return entry
        async with self._phases.reading() as conn:
            holder = await repository.find_by_prefix(conn, prefix)
        if holder is None:
            return None
        caller = Caller(holder.application_id, holder.environment, holder.credential_id, holder.scopes)
        entry = _Entry(
            caller,
            holder.secret_hash,
            holder.revoked,
            now + CACHE_SECONDS,
            holder.expires_at,
            holder.last_used_at,
        )
        if len(self._cache) >= CACHE_MAX_ENTRIES:
            self._cache.clear()
        self._cache[prefix] = entry
        return entry
