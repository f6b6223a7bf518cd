"""Work started by a request or a job that its caller must not wait for (the simulator's
notifications): each piece runs in a task of its own, owned by the process's Runtime, which
waits for them (then cancels what is left) when it closes.

Why not the answer's background tasks: an in-process call (payorch.http.client) waits for the
whole ASGI call, background tasks included, so a notification sent there that needs a lock its
caller holds (the checkout's lease, while the caller waits for a capture's answer) waits for a
caller that waits for it. A detached task holds up nobody.

A request from outside (not an in-process call) still ends once the work it started ended
(``payorch.http.detached``, its answer has gone by then): what Starlette's background tasks gave, and
what makes a test's call deterministic. ``drain`` waits for everything under way (tests, jobs).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Coroutine, Iterator

log = logging.getLogger("payorch.detached")

# The tasks started on behalf of the outside request under way (None: no such request).
_started: contextvars.ContextVar[list[asyncio.Task[None]] | None] = contextvars.ContextVar(
    "payorch_detached_started", default=None
)


async def _logged(work: Coroutine[object, None, None]) -> None:
    try:
        await work
    except Exception:  # noqa: BLE001 - nobody awaits its result: say what went wrong
        log.exception("detached work failed")


class Detached:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, work: Coroutine[object, None, None]) -> None:
        """Run ``work`` in a task of its own, in a fresh context (nothing of the request's: its
        request id, its in-process mark) but for the outside request it counts towards."""
        started = _started.get()
        context = contextvars.Context()
        context.run(_started.set, started)
        task = asyncio.create_task(_logged(work), context=context)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if started is not None:
            started.append(task)

    async def drain(self) -> None:
        """Wait until no detached work is under way, work started meanwhile included."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    async def close(self, grace_seconds: float) -> None:
        """Wait up to ``grace_seconds`` for the work under way, then cancel what is left."""
        try:
            async with asyncio.timeout(grace_seconds):
                await self.drain()
        except TimeoutError:
            left = set(self._tasks)
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)


class Started:
    """The detached work started on behalf of one outside request (``payorch.http.detached``)."""

    def __init__(self) -> None:
        self._tasks: list[asyncio.Task[None]] = []

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        """Work started inside (in-process calls and the work itself included) counts here."""
        token = _started.set(self._tasks)
        try:
            yield
        finally:
            _started.reset(token)

    async def ended(self) -> None:
        """Wait until all of it ended (asyncio.wait: a cancelled wait leaves the work running)."""
        while pending := [task for task in self._tasks if not task.done()]:
            await asyncio.wait(pending)

