"""The wrapper every simulated provider's API endpoint runs in (docs/providers.md, "A provider's
simulator"), so a provider's package writes only its wire: how a caller presents its
credential, its error bodies, and what each call does.

In order: who calls (the provider's credential; 401), the published credentials' write limit
(429), the owner's fault mode (500, or 504 after the adapter's timeout; simulator/faults.py),
the replay of a request's key (replays.py), then the call in the request's transaction. A call
the provider refuses rolls back (it applies nothing); a call that succeeds keeps its answer
under its key and hands its after-commit work (sending the notifications it wrote) over.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from fastapi import Request
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.background import BackgroundTask
from starlette.responses import Response

from payorch.db.prepared import undo
from payorch.http.deps import runtime_of
from payorch.http.responses import json_response
from payorch.jsontypes import JsonObject
from payorch.runtime import Runtime
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.faults import active_fault, timeout_answer
from payorch.simulator.public import public_write_refused
from payorch.simulator.replays import Replay, fingerprint_of, first_answer, keep
from payorch.simulator.simulated import AfterCommit, OwnerOf

Refusal = TypeVar("Refusal", bound=Exception)
_READS = ("GET", "HEAD")


@dataclass(frozen=True)
class Answer:
    """What a call answers (the provider's body), and the work to do once it committed."""

    body: JsonObject | list[JsonObject]
    status: int = 200
    after_commit: AfterCommit | None = None


# (the caller's owner) -> the answer; raises the provider's refusal to refuse.
Call = Callable[[str], Awaitable[Answer]]


@dataclass(frozen=True)
class Refusals:
    """The provider's own bodies for the wrapper's answers: 401, 429, 500 and 504."""

    unauthorized: JsonObject
    too_many: JsonObject
    failed: JsonObject
    timed_out: JsonObject


@dataclass(frozen=True)
class Replays:
    """How a provider replays writes carrying a key (replays.py)."""

    header: str  # the request header naming the key
    conflict: JsonObject  # the 409's body: another request under a used key
    compares_body: bool = True  # False: the path alone makes it the same request
    replayed_headers: Mapping[str, str] = field(default_factory=dict)  # added to a replay


class _Raced(Exception):
    """A concurrent request under the same key kept its answer first."""


@dataclass(frozen=True)
class ProviderApi(Generic[Refusal]):
    """One provider's endpoint wrapper: ``await api.answer(request, conn, call)``."""

    name: str  # the simulator's name (fault rows, replay rows)
    credentials: Callable[[Request], Mapping[str, str]]  # what the request presents
    owner_of: OwnerOf  # whose they are (the provider's credentials.owner_of)
    refusals: Refusals
    refused: type[Refusal]  # what a call raises to refuse
    refusal: Callable[[Refusal], tuple[int, Mapping[str, object]]]  # its status and body
    replays: Replays | None = None  # None: keys are not replayed

    async def answer(self, request: Request, conn: AsyncConnection, call: Call) -> Response:
        runtime = runtime_of(request)
        owner = self.owner_of(runtime.cipher, self.credentials(request))
        if owner is None:
            return json_response(self.refusals.unauthorized, 401)
        writes = request.method not in _READS
        if owner == PUBLIC_OWNER and writes:
            refused = await public_write_refused(request, runtime, self.refusals.too_many)
            if refused is not None:
                return refused
        fault = await active_fault(conn, owner, self.name)
        if fault == "error":
            return json_response(self.refusals.failed, 500)
        if fault == "timeout":
            return timeout_answer(self.refusals.timed_out, runtime.settings.provider_timeout_seconds)
        key = request.headers.get(self.replays.header) if self.replays is not None and writes else None
        if key is None:
            return await self._run(runtime, conn, owner, call)
        fingerprint = await self._fingerprint(request)
        first = await first_answer(conn, self.name, owner, key)
        if first is not None:
            return self._replayed(first, fingerprint)
        try:
            return await self._run(runtime, conn, owner, call, key, fingerprint)
        except _Raced:
            await undo(conn)  # this one's call is undone; the first one's answer stands
        first = await first_answer(conn, self.name, owner, key)
        assert first is not None  # its row committed before this insert failed
        return self._replayed(first, fingerprint)

    async def _run(
        self,
        runtime: Runtime,
        conn: AsyncConnection,
        owner: str,
        call: Call,
        key: str | None = None,
        fingerprint: str = "",
    ) -> Response:
        try:
            answer = await call(owner)
        except self.refused as error:
            await undo(conn)  # a refused call applies nothing
            status, body = self.refusal(error)
            return json_response(body, status)
        if key is not None:
            kept = Replay(fingerprint, answer.status, answer.body)
            try:
                await keep(conn, self.name, owner, key, kept, runtime.clock.now())
            except IntegrityError as error:
                raise _Raced from error
        response = json_response(answer.body, answer.status)
        if answer.after_commit is not None:
            response.background = BackgroundTask(answer.after_commit, runtime, runtime.phases)
        return response

    async def _fingerprint(self, request: Request) -> str:
        assert self.replays is not None
        body = await request.body() if self.replays.compares_body else b""
        return fingerprint_of(request.url.path.encode(), body)

    def _replayed(self, first: Replay, fingerprint: str) -> Response:
        assert self.replays is not None
        if first.fingerprint != fingerprint:
            return json_response(self.replays.conflict, 409)
        return json_response(first.body, first.status_code, dict(self.replays.replayed_headers))
