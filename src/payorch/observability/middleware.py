"""Request count and latency by route template and status: a pure ASGI middleware.

The route template ("/v1/payment-intents/{payment_intent_id}") comes from the route FastAPI
matched (``scope["route"]``, set while routing), never from the raw path, so ids do not
explode the number of series; requests that match no route share "<unmatched>". Label
children are cached per (method, route, status): the hot path does one dict lookup, one
counter increment and one histogram observation.
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from payorch.http.context import in_process, route_template
from payorch.observability import metrics

KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class MetricsMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        requests: Counter = metrics.HTTP_REQUESTS,
        duration: Histogram = metrics.HTTP_REQUEST_DURATION,
    ) -> None:
        self.app = app
        self._requests = requests
        self._duration = duration
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or in_process(scope):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # if nothing is sent, the server answers 500

        async def send_and_note_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note_status)
        finally:
            template = route_template(scope)
            method = scope["method"] if scope["method"] in KNOWN_METHODS else "OTHER"
            key = (method, template, status)
            children = self._children.get(key)
            if children is None:
                label = str(status)
                children = (
                    self._requests.labels(method, template, label),
                    self._duration.labels(method, template, label),
                )
                self._children[key] = children
            children[0].inc()
            children[1].observe(time.perf_counter() - started)
