"""A scripted provider API behind ``httpx.MockTransport``, shared by the adapter tests.

``FakeProvider`` records every request and answers it with the handler routed to its method
and path (``on``), else with ``handler``; a request nothing answers fails the test. ``reply``,
``slow``, ``broken`` and ``by_method`` make handlers; ``fake_http`` is a client over the fake.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

Handler = Callable[[httpx.Request], Awaitable[httpx.Response]]


class FakeProvider:
    """A scripted provider: records requests, answers with the routed handler or ``handler``."""

    def __init__(self, handler: Handler | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.routes: dict[tuple[str, str], Handler] = {}
        self.handler = handler

    def on(self, method: str, path: str, handler: Handler) -> None:
        self.routes[(method, path)] = handler

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        handler = self.routes.get((request.method, request.url.path), self.handler)
        assert handler is not None, f"unexpected call {request.method} {request.url}"
        return await handler(request)


@asynccontextmanager
async def fake_http(fake: FakeProvider) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client whose every request goes to ``fake``."""
    async with httpx.AsyncClient(transport=httpx.MockTransport(fake)) as http:
        yield http


def reply(status: int, body: Any = None, *, raw: bytes | None = None) -> Handler:
    async def handler(request: httpx.Request) -> httpx.Response:
        if raw is not None:
            return httpx.Response(status, content=raw)
        return httpx.Response(status, json=body)

    return handler


def slow() -> Handler:
    """Answers after 5 s: longer than any adapter timeout under test."""

    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200, json={})

    return handler


def broken(
    error: type[httpx.TransportError] = httpx.ConnectError, message: str = "connection refused"
) -> Handler:
    """Fails at the transport with ``error``: no answer at all."""

    async def handler(request: httpx.Request) -> httpx.Response:
        raise error(message, request=request)

    return handler


def by_method(**answers: Handler) -> Handler:
    async def handler(request: httpx.Request) -> httpx.Response:
        return await answers[request.method](request)

    return handler
