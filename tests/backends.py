"""Ending PostgreSQL backends from a test (a restart or a failover as payorch's connections see
it), and waiting until the end is real rather than for a fixed time."""

from __future__ import annotations

import asyncio
import time

import asyncpg

from tests.live import is_running

END_SECONDS = 60.0


async def terminate_backends(admin: asyncpg.Connection[asyncpg.Record], pids: list[int]) -> None:
    """Terminate ``pids`` and return once each has ended and closed its socket, after giving the
    event loop a turn to read those ends (an in-process app then sees its connections closed).

    pg_terminate_backend only signals. A backend leaves pg_stat_activity before its process has
    exited and closed its socket, a gap that a loaded machine widens; the tests' PostgreSQL runs
    on this machine (127.0.0.1), so the process table says when the process has ended."""
    await admin.execute("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", pids)
    deadline = time.monotonic() + END_SECONDS
    while await _listed(admin, pids) or any(is_running(pid) for pid in pids):
        if time.monotonic() > deadline:
            raise AssertionError(f"backends {pids} did not end in {END_SECONDS:g} s")
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # the event loop's turn: no timing, the sockets are closed already


async def _listed(admin: asyncpg.Connection[asyncpg.Record], pids: list[int]) -> int:
    count = await admin.fetchval("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])", pids)
    return int(count)
