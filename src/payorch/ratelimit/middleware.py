"""Pure ASGI middleware (no BaseHTTPMiddleware): count the request, answer 429 when over, and
add RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset to every limited answer.

Only the API is limited: paths under /v1/ and the simulator controls (they take bearer keys).
The provider-facing paths (checkout returns, provider notifications) carry no key and are not
ours to throttle: a buyer's browser or a provider calls them.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from payorch.errors import AuthenticationFailed, RateLimitExceeded
from payorch.http.context import _send_error, in_process
from payorch.http.deps import AUTHENTICATED_CALLER
from payorch.ratelimit.limiter import Decision, RateLimiter, client_address
from payorch.runtime import Runtime

log = logging.getLogger("payorch.ratelimit")

LIMITED_PREFIXES = ("/v1/", "/simulator/controls")
UNLIMITED_PREFIXES = ("/v1/checkout-returns/", "/v1/provider-notifications/")


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, runtime: Runtime, limiter: RateLimiter | None = None) -> None:
        self.app = app
        self.runtime = runtime
        self.limiter = limiter or runtime.rate_limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if (
            scope["type"] != "http"
            or in_process(scope)
            or not path.startswith(LIMITED_PREFIXES)
            or path.startswith(UNLIMITED_PREFIXES)
        ):
            await self.app(scope, receive, send)
            return
        try:
            decision = await self._decide(scope)
        except Exception:  # a bug, not Redis (the limiter counts here while Redis is away): serve
            log.exception("rate limiter failed; request not counted")
            await self.app(scope, receive, send)
            return
        headers = _headers(decision)
        if not decision.allowed:
            error = RateLimitExceeded(retry_after_seconds=decision.reset_seconds)
            request_id = str(scope.get("state", {}).get("request_id", "-"))
            await _send_error(_with_headers(send, headers), error, request_id)
            return
        await self.app(scope, receive, _with_headers(send, headers))

    async def _decide(self, scope: Scope) -> Decision:
        authorization = _header(scope, b"authorization")
        if authorization is not None:
            try:
                caller = await self.runtime.authenticator.authenticate(authorization)
            except AuthenticationFailed:
                pass
            else:
                # The endpoint's authentication reuses this check of the same header (http/deps.py).
                scope.setdefault("state", {})[AUTHENTICATED_CALLER] = (authorization, caller)
                return await self.limiter.hit_application(caller.application_id)
        return await self.limiter.hit_address(client_address(scope))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _headers(decision: Decision) -> list[tuple[bytes, bytes]]:
    return [
        (b"ratelimit-limit", str(decision.limit).encode()),
        (b"ratelimit-remaining", str(decision.remaining).encode()),
        (b"ratelimit-reset", str(decision.reset_seconds).encode()),
    ]


def _with_headers(send: Send, headers: list[tuple[bytes, bytes]]) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *headers]
        await send(message)

    return wrapped
