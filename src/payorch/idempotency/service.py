"""Idempotency-Key, as docs/api.md (Idempotency) describes it.

A request with a key goes through three steps:

1. ``begin``: claim the key (INSERT ... ON CONFLICT DO NOTHING on the primary key; each of its
   statements a compare-and-set, atomic alone, so on PostgreSQL no transaction around them).
   Outcomes: claimed, replay of a stored 2xx, IDEMPOTENCY_CONFLICT (other request),
   IDEMPOTENCY_KEY_IN_USE (first request still running).
2. The operation runs; in the transaction of its last write it calls ``complete``, so the
   stored answer commits together with the effect (a crash loses both or neither).
3. On any error, ``release`` deletes the claim after the operation's rollback: only 2xx outcomes
   are remembered, so the same key may be retried.

A claim is a lease: if its holder dies, another request may take it over once the lease ends.
Multi-phase operations (checkout, refunds) call begin/complete/release themselves.

Single-transaction operations use ``run``, which skips the separate claim: the key is inserted,
already COMPLETED with the answer, at the end of the operation's own transaction. The primary
key still decides: a concurrent request with the same key waits on it (PostgreSQL) or on the
single writer (SQLite), then rolls its own work back and replays the winner's answer. Cheaper
(one transaction instead of three), and a failed operation leaves nothing behind to release.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

import orjson
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.db import Phases
from payorch.errors import IdempotencyConflict, IdempotencyKeyInUse, ValidationFailed
from payorch.idempotency import repository
from payorch.idempotency.records import IdempotencyRecord, IdempotentResult
from payorch.jsontypes import dumps

T = TypeVar("T")
MAX_KEY_LENGTH = 255
DEFAULT_LEASE_SECONDS = 60.0


@dataclass(frozen=True)
class Scope:
    application_id: str
    operation: str  # "POST /v1/payment-intents"
    key: str
    fingerprint: str


def check_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not all(33 <= ord(c) <= 126 or c == " " for c in key):
        raise ValidationFailed.field(
            "Idempotency-Key", "must be 1 to 255 printable ASCII characters"
        )
    return key


def fingerprint(method: str, path: str, body: object) -> str:
    canonical = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(method.encode() + b" " + path.encode() + b"\n" + canonical).hexdigest()


class Idempotency:
    def __init__(self, phases: Phases, clock: Clock, ttl_seconds: int) -> None:
        # Its own short transactions (claim, release, purge) are phases of the caller's flow.
        self._phases = phases
        self._clock = clock
        self._ttl = timedelta(seconds=ttl_seconds)

    def scope(self, application_id: str, method: str, path: str, key: str, body: object) -> Scope:
        return Scope(application_id, f"{method} {path}", check_key(key), fingerprint(method, path, body))

    async def begin(
        self, scope: Scope, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> IdempotentResult | None:
        """Claim the key (None) or answer with what the first request stored (replayed)."""
        ids = (scope.application_id, scope.operation, scope.key)
        for _ in range(3):  # a row may vanish (released) between our insert and read: try again
            now = self._clock.now()
            lease = now + timedelta(seconds=lease_seconds)
            # Each statement is a compare-and-set on the key: no transaction needed around them.
            async with self._phases.each_statement() as conn:
                claim = repository.claim_row(
                    fingerprint=scope.fingerprint, now=now, locked_until=lease,
                    expires_at=now + self._ttl,
                )
                if await repository.insert_if_absent(conn, *ids, row=claim):
                    return None
                row = await repository.get(conn, *ids)
                if row is None:
                    continue
                if row.expires_at <= now:
                    if await repository.take_over(conn, *ids, row=claim, now=now):
                        return None
                    continue
                if row.fingerprint != scope.fingerprint:
                    raise IdempotencyConflict()
                if row.state == repository.COMPLETED:
                    return _replay_of(row)
                if row.locked_until > now:
                    wait = math.ceil((row.locked_until - now).total_seconds())
                    raise IdempotencyKeyInUse(retry_after_seconds=max(1, min(wait, 5)))
                if await repository.take_over_stale_lock(
                    conn,
                    application_id=scope.application_id,
                    operation=scope.operation,
                    key=scope.key,
                    now=now,
                    locked_until=lease,
                ):
                    return None
        raise IdempotencyKeyInUse(retry_after_seconds=1)

    async def complete(self, conn: AsyncConnection, scope: Scope, status: int, body: bytes) -> None:
        """Store the answer, in the transaction of the operation's last write."""
        await repository.complete(
            conn,
            application_id=scope.application_id,
            operation=scope.operation,
            key=scope.key,
            fingerprint=scope.fingerprint,
            status=status,
            body=body,
        )

    async def release(self, scope: Scope) -> None:
        """Free the key after a failed attempt (call after the operation rolled back)."""
        async with self._phases.each_statement() as conn:  # one DELETE
            await repository.delete_claim(
                conn,
                application_id=scope.application_id,
                operation=scope.operation,
                key=scope.key,
                fingerprint=scope.fingerprint,
            )

    async def leased(
        self, scope: Scope | None, lease_seconds: float, flow: Callable[[], Awaitable[T]]
    ) -> T | IdempotentResult:
        """Run a multi-phase ``flow`` under an optional key held for ``lease_seconds``: a replay
        answers the stored result; any error frees the key (``flow`` stores its 2xx with
        ``complete`` in its last transaction)."""
        if scope is not None:
            stored = await self.begin(scope, lease_seconds=lease_seconds)
            if stored is not None:
                return stored
        try:
            return await flow()
        except BaseException:
            if scope is not None:
                await self.release(scope)
            raise

    async def purge(self) -> int:
        async with self._phases.transaction() as conn:
            return await repository.purge_expired(conn, self._clock.now())

    async def run(
        self,
        scope: Scope | None,
        operation: Callable[[AsyncConnection], Awaitable[tuple[int, object]]],
    ) -> IdempotentResult:
        """Run a single-transaction operation under an optional key; answer its JSON."""
        try:
            async with self._phases.transaction() as conn:
                status, body = await operation(conn)
                raw = dumps(body)
                if scope is not None and 200 <= status < 300:
                    await self._store_or_abort(conn, scope, status, raw)
        except _Replay as replay:
            return replay.stored
        return IdempotentResult(status, raw)

    def stored_answer_parameters(self, scope: Scope, status: int, raw: bytes) -> dict[str, object]:
        """The parameters of stored_answer_fragment for this answer."""
        now = self._clock.now()
        answer = repository.completed_row(
            fingerprint=scope.fingerprint, now=now, expires_at=now + self._ttl, status=status, body=raw
        )
        return {
            "application_id": scope.application_id,
            **repository.completed_key_parameters(scope.operation, scope.key, answer),
        }

    async def _store_or_abort(self, conn: AsyncConnection, scope: Scope, status: int, raw: bytes) -> None:
        """Record the answer under the key, or raise (rolling the operation back) if taken."""
        now = self._clock.now()
        ids = (scope.application_id, scope.operation, scope.key)
        answer = repository.completed_row(
            fingerprint=scope.fingerprint, now=now, expires_at=now + self._ttl, status=status, body=raw
        )
        if await repository.insert_if_absent(conn, *ids, row=answer):
            return
        row = await repository.get(conn, *ids)
        if row is None or row.expires_at <= now or (
            row.state == repository.IN_PROGRESS and row.locked_until <= now
        ):
            if await repository.take_over(conn, *ids, row=answer, now=now, or_stale_claim=True):
                return
            raise IdempotencyKeyInUse(retry_after_seconds=1)
        if row.fingerprint != scope.fingerprint:
            raise IdempotencyConflict()
        if row.state == repository.COMPLETED:
            raise _Replay(_replay_of(row))
        wait = math.ceil((row.locked_until - now).total_seconds())
        raise IdempotencyKeyInUse(retry_after_seconds=max(1, min(wait, 5)))


# PostgreSQL's one-statement writes (payorch.db.one_statement): the key stored with its answer
# (Idempotency.stored_answer_parameters) when the fragment ``checked`` returned a row; no row when the
# key is taken, and the caller then runs ``Idempotency.run``, which replays or refuses.
STORED_ANSWER_FRAGMENT = repository.COMPLETED_KEY_FRAGMENT


class _Replay(Exception):
    """Raised inside the operation's transaction to roll it back and answer the stored reply."""

    def __init__(self, stored: IdempotentResult) -> None:
        super().__init__("replay")
        self.stored = stored


def _replay_of(row: IdempotencyRecord) -> IdempotentResult:
    """The stored answer of a COMPLETED key (both columns are set when a key completes)."""
    assert row.response_status is not None and row.response_body is not None
    return IdempotentResult(row.response_status, row.response_body.encode(), replayed=True)
