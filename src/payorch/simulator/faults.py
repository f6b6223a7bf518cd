"""Fault injection for the simulated provider APIs, per application (docs/simulator.md, "Controls").

``error``: the call answers HTTP 500 and applies nothing. ``timeout``: the call applies nothing
and answers only after PAYORCH_PROVIDER_TIMEOUT_SECONDS + 1 (a 504), so the adapter's own timeout
fires first. Modes live in the database, so every replica sees the same.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from payorch.jsontypes import dumps
from payorch.simulator import repository

Fault = Literal["error", "timeout"]
MODES = ("ok", "error", "timeout")


async def active_fault(conn: AsyncConnection, owner: str, provider: str) -> Fault | None:
    """The fault to apply to ``owner``'s call to ``provider`` (None: answer normally)."""
    mode = await repository.fault_mode(conn, owner, provider)
    if mode == "timeout":
        return "timeout"
    if mode == "error":
        return "error"
    return None


class LateResponse(Response):
    """A JSON answer sent only ``delay`` seconds after the endpoint returned it.

    The wait happens while the response is sent, after the request's transaction ended (``Conn``
    commits before the response goes out), so a timeout fault holds no transaction or lock.
    """

    def __init__(self, body: object, status_code: int, delay: float) -> None:
        super().__init__(dumps(body), status_code=status_code, media_type="application/json")
        self.delay = delay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await asyncio.sleep(self.delay)
        await super().__call__(scope, receive, send)


def timeout_answer(body: object, provider_timeout_seconds: float) -> Response:
    """The ``timeout`` fault's 504: after the adapter's own timeout has fired."""
    return LateResponse(body, 504, provider_timeout_seconds + 1)
