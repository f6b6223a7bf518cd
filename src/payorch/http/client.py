"""The outgoing HTTP client shared by a process (provider adapters, simulator notifications).

URLs under PAYORCH_PUBLIC_URL are this service itself (simulator routes, provider-notification
endpoint): they are dispatched in-process through ASGI instead of the network, so MOCK mode
works whatever the public address is, in tests and behind a load balancer. Everything else
goes over a pooled network connection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx


class SelfDispatchTransport(httpx.AsyncBaseTransport):
    def __init__(self, public_url: str, app_factory: Callable[[], Any]) -> None:
        parsed = httpx.URL(public_url)
        self._origin = (parsed.scheme, parsed.host, parsed.port)
        self._app_factory = app_factory
        self._local: httpx.ASGITransport | None = None
        self._network = httpx.AsyncHTTPTransport(retries=0)

    def _is_self(self, url: httpx.URL) -> bool:
        return (url.scheme, url.host, url.port) == self._origin

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._is_self(request.url):
            if self._local is None:
                self._local = httpx.ASGITransport(app=self._app_factory())
            return await self._local.handle_async_request(request)
        return await self._network.handle_async_request(request)

    async def aclose(self) -> None:
        await self._network.aclose()


def build_client(public_url: str, app_factory: Callable[[], Any], timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=SelfDispatchTransport(public_url, app_factory),
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
    )
