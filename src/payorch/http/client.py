"""The outgoing HTTP client shared by a process (provider adapters, simulator notifications).

URLs under PAYORCH_PUBLIC_URL are this service itself (simulator routes, provider-notification
endpoint): they are dispatched in-process through ASGI instead of the network, so MOCK mode
works whatever the public address is, in tests and behind a load balancer. Everything else
goes over a pooled network connection.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from payorch.http.context import IN_PROCESS, request_id_var


class LocalApp:
    """The ASGI app of this process, for in-process calls to our own routes.

    Bound once: ``create_app`` binds the app it builds (the first one wins); a process that
    serves no API (the worker) gets one from ``fallback`` on first use. It lives outside the
    Runtime's module so that the runtime never imports the app.
    """

    def __init__(self, app: ASGIApp | None = None) -> None:
        self._app = app
        self._fallback: Callable[[], ASGIApp] | None = None

    def bind(self, app: ASGIApp) -> None:
        if self._app is None:
            self._app = app

    def fallback(self, build: Callable[[], ASGIApp]) -> None:
        """How to build the app if nothing bound one before the first in-process call."""
        self._fallback = build

    def get(self) -> ASGIApp:
        if self._app is None:
            if self._fallback is None:
                raise RuntimeError("no ASGI app is bound for in-process calls")
            self._app = self._fallback()
        return self._app


class _InProcess:
    """Marks each scope as an in-process call, under the calling request's id."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[IN_PROCESS] = True
        scope.setdefault("state", {})["request_id"] = request_id_var.get()
        await self.app(scope, receive, send)


class SelfDispatchTransport(httpx.AsyncBaseTransport):
    def __init__(self, public_url: str, local_app: LocalApp) -> None:
        parsed = httpx.URL(public_url)
        self._origin = (parsed.scheme, parsed.host, parsed.port)
        self._local_app = local_app
        self._local: httpx.ASGITransport | None = None
        self._network = httpx.AsyncHTTPTransport(retries=0)

    def _is_self(self, url: httpx.URL) -> bool:
        return (url.scheme, url.host, url.port) == self._origin

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._is_self(request.url):
            if self._local is None:
                # An error in the app is a 500 answer, as over the network (the edge's
                # last-resort 500 is skipped in process).
                self._local = httpx.ASGITransport(
                    app=_InProcess(self._local_app.get()), raise_app_exceptions=False
                )
            return await self._local.handle_async_request(request)
        return await self._network.handle_async_request(request)

    async def aclose(self) -> None:
        await self._network.aclose()


def build_client(public_url: str, local_app: LocalApp, timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=SelfDispatchTransport(public_url, local_app),
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
    )
