"""A read whose database connection was lost is tried once more before the client hears of it.

Pure ASGI, innermost (inside the rate limit and the request log: one request, counted and
logged once). Only a GET or HEAD whose every database step was a read is retried, and only
once; the rule and why it is safe are in payorch.db.unavailable. The first try's answer (a 503
``SERVICE_UNAVAILABLE``) is held back, never sent; the second try's answer is the request's.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from payorch.db.unavailable import Attempt, attempt_var

SAFE_METHODS = ("GET", "HEAD")


class RetryReadsOnLostConnection:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        first = Attempt()
        received: list[Message] = []
        held_back = False

        async def recording() -> Message:
            message = await receive()
            received.append(message)
            return message

        async def send_or_hold(message: Message) -> None:
            nonlocal held_back
            if message["type"] == "http.response.start":
                held_back = message["status"] == 503 and first.lost and not first.may_write
            if not held_back:
                await send(message)

        token = attempt_var.set(first)
        try:
            await self.app(scope, recording, send_or_hold)
        finally:
            attempt_var.reset(token)
        if held_back:
            await self.app(scope, _replaying(received, receive), send)


def _replaying(received: list[Message], receive: Receive) -> Receive:
    """What the first try read of the request (a GET's empty body), then the connection's own."""
    pending = list(received)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay
