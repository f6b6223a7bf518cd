"""The runtime's in-process calls (adapter -> simulator, simulator -> our notification endpoint)
with two faults a real network has and the simulator's controls do not: a notification that
never arrives (held here, for the test to deliver later, in any order, any number of times) and
an answer lost after the provider applied the call."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from payorch.http.client import LocalApp

NOTIFICATIONS = "/v1/provider-notifications/"


@dataclass(frozen=True)
class HeldNotification:
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


async def _body(receive: Receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


async def _discard(message: Message) -> None:
    return None


class Network(LocalApp):
    def __init__(self) -> None:
        super().__init__()
        self.holding = False
        self.held: list[HeldNotification] = []
        self._lose_under: str | None = None
        self._lose_methods: tuple[str, ...] = ("POST",)
        self.lost = 0
        self._wrapped: ASGIApp | None = None

    def hold_notifications(self) -> None:
        """From now on, notifications are answered 200 by "the network" and kept here."""
        self.holding = True

    def release(self) -> list[HeldNotification]:
        """Stop holding; answer what was held (oldest first) and forget it."""
        self.holding = False
        held, self.held = self.held, []
        return held

    def lose_next_answer(self, path_prefix: str, methods: tuple[str, ...] = ("POST",)) -> None:
        """The next call of ``methods`` (POST by default) under ``path_prefix`` is served in full,
        then its answer never arrives (the caller's own timeout fires)."""
        self._lose_under = path_prefix
        self._lose_methods = methods

    def get(self) -> ASGIApp:
        if self._wrapped is None:
            self._wrapped = self._wrap(super().get())
        return self._wrapped

    def _wrap(self, app: ASGIApp) -> ASGIApp:
        async def network(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope.get("path", "")
            if scope["type"] == "http" and self.holding and path.startswith(NOTIFICATIONS):
                headers = {k.decode(): v.decode() for k, v in scope["headers"]}
                query = scope["query_string"].decode()
                self.held.append(HeldNotification(path, query, headers, await _body(receive)))
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
            if (
                self._lose_under is not None
                and scope["type"] == "http"
                and scope["method"] in self._lose_methods
                and path.startswith(self._lose_under)
            ):
                self._lose_under = None
                await app(scope, receive, _discard)  # applied at the provider...
                self.lost += 1
                await asyncio.Event().wait()  # ...and no answer, ever
            await app(scope, receive, send)

        return network
