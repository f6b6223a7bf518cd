"""Outermost middleware: request id and origin (payorch.activity.origin), body size and media
type checks, last-resort 500, the one log line of each request, and each answer's Server-Timing
(app, db and provider time: payorch.observability.timing).

Pure ASGI (no BaseHTTPMiddleware) to keep the hot path cheap.

The request line (logger ``payorch.requests``, INFO) carries the method, the route template
(``/v1/payment-intents/{payment_intent_id}``, never the raw path: ids and query strings stay
out), the status, the duration in ms, the request id and the application id once the key was
checked. Never a header, a query string or a body.
"""

from __future__ import annotations

import logging
import re
import time
from contextvars import ContextVar
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from payorch.activity import origin
from payorch.errors import (
    ApiError,
    InternalError,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationFailed,
)
from payorch.http.responses import error_body
from payorch.ids import new_id
from payorch.jsontypes import dumps
from payorch.observability import timing

MAX_BODY_BYTES = 64 * 1024
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
request_id_var: ContextVar[str] = ContextVar("request_id", default="-")
log = logging.getLogger("payorch.http")
request_log = logging.getLogger("payorch.requests")
UNMATCHED = "<unmatched>"  # the route of a request no route matched (404, 405, rejected early)

# Paths whose POST bodies are not our JSON API: provider form posts, simulator and dashboard
# pages, the Pay form of a payment link's page and the button of the second-chance page.
NON_JSON_PREFIXES = (
    "/v1/checkout-returns/",
    "/simulator/",
    "/v1/provider-notifications/",
    "/dashboard/",
    "/pay/",
    "/checkout-retry/",
)

# Scope key of an in-process call, set only by http/client.py's in-process dispatch (a server
# builds its scopes from the wire and cannot set it). The edge middlewares (metrics, request
# context and log, rate limit with its key check) pass such a call straight through: the client
# request that led to it already paid for them once.
IN_PROCESS = "payorch.in_process"


def in_process(scope: Scope) -> bool:
    return scope.get(IN_PROCESS) is True


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or in_process(scope):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        incoming = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _SANE_REQUEST_ID.match(incoming) else new_id("req")
        scope.setdefault("state", {})["request_id"] = request_id
        token = request_id_var.set(request_id)
        origin_token = origin.enter(origin.origin_of(scope, headers, request_id))
        started = False
        status = 500  # if nothing is sent, the server answers 500
        began = time.perf_counter()
        header_value = request_id.encode()
        waits = timing.Timing()
        timing_token = timing.current.set(waits)

        async def send_with_id(message: Message) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                spent = timing.server_timing(time.perf_counter() - began, waits)
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", header_value),
                    (b"server-timing", spent),
                ]
            await send(message)

        try:
            rejection = _reject_body(scope, headers)
            if rejection is not None:
                await _send_error(send_with_id, rejection, request_id)
                return
            await self.app(scope, _limited(receive, scope), send_with_id)
        except ApiError as error:  # raised while reading the body, outside a route
            if not started:
                await _send_error(send_with_id, error, request_id)
        except Exception:
            log.exception("unhandled error", extra={"request_id": request_id})
            if not started:
                await _send_error(send_with_id, InternalError(), request_id)
        finally:
            _log_request(scope, status, time.perf_counter() - began)
            request_id_var.reset(token)
            timing.current.reset(timing_token)
            origin.leave(origin_token)


def route_template(scope: Scope) -> str:
    """The path template of the route FastAPI matched (set on ``scope`` while routing)."""
    return getattr(scope.get("route"), "path", None) or UNMATCHED


def _log_request(scope: Scope, status: int, seconds: float) -> None:
    if not request_log.isEnabledFor(logging.INFO):
        return
    # Set by the authentication dependency (http/deps.py) once the key was checked.
    caller = scope.get("state", {}).get("caller")
    method = scope["method"]
    route = route_template(scope)
    extra = {
        "method": method,
        "route": route,
        "status": status,
        "duration_ms": round(seconds * 1000, 1),
        "application_id": getattr(caller, "application_id", None),
    }
    # The record made and handled directly, as Logger.info does it less its look up the stack
    # for the calling line (this line, always).
    record = request_log.makeRecord(
        request_log.name, logging.INFO, __file__, 0, "%s %s -> %s", (method, route, status), None, extra=extra
    )
    request_log.handle(record)


NUL_MESSAGE = "NUL characters are not accepted."


def _reject_body(scope: Scope, headers: dict[bytes, bytes]) -> ApiError | None:
    # No text column (PostgreSQL's least of all) can hold NUL: refuse it at the door as bad
    # input instead of failing deep inside with a 500.
    query: bytes = scope.get("query_string", b"")
    if "\x00" in scope["path"] or b"%00" in query or b"\x00" in query:
        return ValidationFailed(NUL_MESSAGE)
    if scope["method"] not in ("POST", "PUT", "PATCH"):
        return None
    length = headers.get(b"content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
        return PayloadTooLarge()
    has_body = (length is not None and length != b"0") or b"transfer-encoding" in headers
    path: str = scope["path"]
    if has_body and not path.startswith(NON_JSON_PREFIXES):
        media = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if media != b"application/json" and not media.endswith(b"+json"):
            return UnsupportedMediaType()
    return None


def _limited(receive: Receive, scope: Scope) -> Receive:
    """Count body bytes as they arrive: chunked bodies have no Content-Length to check.

    FastAPI turns any error while reading the body into a generic 400, so we also leave a mark
    in the request state that the error handler turns back into 413.
    """
    seen = 0
    tail = b""  # the end of the previous chunk, so an escape split across chunks is found

    async def wrapped() -> Message:
        nonlocal seen, tail
        message = await receive()
        if message["type"] == "http.request":
            chunk: bytes = message.get("body", b"")
            seen += len(chunk)
            if seen > MAX_BODY_BYTES:
                scope["state"]["body_too_large"] = True
                raise PayloadTooLarge()
            window = tail + chunk
            if b"\\u0000" in window or b"\x00" in window or b"%00" in window:
                scope["state"]["body_has_nul"] = True
                raise ValidationFailed(NUL_MESSAGE)
            tail = window[-6:]
        return message

    return wrapped


async def _send_error(send: Send, error: ApiError, request_id: str) -> None:
    body = dumps(error_body(error, request_id))
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    headers += [(k.lower().encode(), v.encode()) for k, v in error.headers().items()]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
