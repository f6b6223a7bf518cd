"""A request from outside ends once the detached work it started ended (payorch.detached)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from payorch.detached import Started
from payorch.http.context import IN_PROCESS


class AwaitDetached:
    """A request from outside ends once the detached work it started (through in-process calls
    too) ended; in-process calls never wait for it (module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get(IN_PROCESS):
            await self.app(scope, receive, send)
            return
        started = Started()
        try:
            with started.counting():
                await self.app(scope, receive, send)
        finally:
            await started.ended()
