"""Fault injection for the simulated provider APIs, per application (docs/simulator.md, Controls).

``error``: the call answers HTTP 500 and applies nothing. ``timeout``: the call applies nothing
and answers only after PAYORCH_PROVIDER_TIMEOUT_SECONDS + 1 (a 504), so the adapter's own timeout
fires first. Modes live in the database, so every replica sees the same.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from payorch.runtime import Runtime
from payorch.simulator import repository

Fault = Literal["error", "timeout"]
MODES = ("ok", "error", "timeout")


async def active_fault(runtime: Runtime, owner: str, provider: str) -> Fault | None:
    """The fault to apply to ``owner``'s call, after waiting out a timeout (no transaction held)."""
    async with runtime.database.transaction() as conn:
        mode = await repository.fault_mode(conn, owner, provider)
    if mode == "timeout":
        await asyncio.sleep(runtime.settings.provider_timeout_seconds + 1)
        return "timeout"
    if mode == "error":
        return "error"
    return None
