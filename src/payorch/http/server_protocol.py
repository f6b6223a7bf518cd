"""uvicorn's httptools protocol with deadlines, a connection cap and refusals in the error shape.

Why: uvicorn has no deadline for a request's headers or body (its keep-alive timer is cancelled
by any byte), so a client that sends half a request line and stops holds a socket, and a file
descriptor, forever; enough of them and accept() fails with EMFILE and even /healthz goes
unanswered. uvicorn also refuses malformed HTTP in plain text. `payorch serve` passes this
class to uvicorn as its HTTP protocol (by import string, so `--workers N` processes load it too):

- headers must be complete `PAYORCH_HEADER_TIMEOUT_SECONDS` after the connection opened or the
  previous answer ended (an absolute deadline: trickling bytes does not extend it), the whole
  body `PAYORCH_BODY_TIMEOUT_SECONDS` after the headers; then 408 REQUEST_TIMEOUT when a request
  had begun (a plain close when nothing was sent) and the connection is closed;
- one connection over `PAYORCH_MAX_CONNECTIONS` (per process) gets 503 SERVICE_UNAVAILABLE with
  Retry-After and is closed at once, before the fd limit is reached;
- a route may act on its connection through ``connection_control(scope)`` (an ASGI scope
  extension): drop it at once (closing would wait for a client that stopped reading to take
  what is buffered) and shrink its kernel send buffer (Linux grows it to megabytes, all made
  before a reader that takes nothing is noticed); an export does both (payorch.exports.streaming);
- what the parser refuses (conflicting Content-Length, a bad chunk size, a garbage request line)
  gets 400 MALFORMED_REQUEST instead of uvicorn's text;
- a request's head is limited (uvicorn and httptools read headers of any size, and httptools
  joins a long header's pieces by copying them, so one client sending a 64 MiB header costs the
  process its memory and the other clients their latency): the request line and headers to
  `PAYORCH_MAX_HEADER_BYTES`, the headers to `PAYORCH_MAX_HEADER_COUNT`, both 431
  REQUEST_HEADER_FIELDS_TOO_LARGE; the URL to `PAYORCH_MAX_URL_BYTES`, 414 URI_TOO_LONG. The bytes
  of a head are counted as they arrive and the parser is never given more than the limit allows,
  so an oversized head costs at most the limit before the connection is refused and closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

from starlette.types import Scope
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.server import ServerState

from payorch.config import Settings, load_settings
from payorch.errors import (
    ApiError,
    MalformedRequest,
    RequestHeaderFieldsTooLarge,
    RequestTimeout,
    ServiceUnavailable,
    UriTooLong,
)
from payorch.http.responses import error_body
from payorch.ids import new_id
from payorch.jsontypes import dumps

IMPORT_STRING = "payorch.http.server_protocol:PayorchHttpProtocol"
CONNECTION_EXTENSION = "payorch.connection"  # scope["extensions"][...]["control"]
RETRY_AFTER_SECONDS = 1  # over the cap: idle connections are cut within the header timeout
log = logging.getLogger("payorch.http")


@dataclass(frozen=True, slots=True)
class ConnectionControl:
    """What a route may do to its request's connection."""

    abort: Callable[[], None]  # drop it now, whatever is still buffered
    limit_send_buffer: Callable[[int], None]  # SO_SNDBUF, in bytes (Linux doubles it)


def connection_control(scope: Scope) -> ConnectionControl | None:
    """The connection's control when payorch's server serves it (None in process)."""
    extension = (scope.get("extensions") or {}).get(CONNECTION_EXTENSION)
    control = extension.get("control") if isinstance(extension, dict) else None
    return control if isinstance(control, ConnectionControl) else None


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    body_timeout: float
    max_connections: int
    max_header_bytes: int
    max_header_count: int
    max_url_bytes: int


def raise_fd_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft == resource.RLIM_INFINITY or soft >= hard:
        return soft
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def connection_limits(settings: Settings) -> ConnectionLimits:
    cap = settings.max_connections
    if cap is None:
        fds = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        fds = 1 << 20 if fds == resource.RLIM_INFINITY else fds
        # A reserve for the database pool, logs, Redis and provider/webhook calls.
        cap = max(1, fds - max(100, fds // 10))
    return ConnectionLimits(
        settings.header_timeout_seconds,
        settings.body_timeout_seconds,
        cap,
        settings.max_header_bytes,
        settings.max_header_count,
        settings.max_url_bytes,
    )


@cache
def _process_limits() -> ConnectionLimits:
    # Read in each server process; `payorch serve` validated the environment before starting.
    return connection_limits(load_settings())


class PayorchHttpProtocol(HttpToolsProtocol):
    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits = _process_limits()
        self._header_deadline: asyncio.TimerHandle | None = None
        self._body_deadline: asyncio.TimerHandle | None = None
        self._request_begun = False  # bytes of a request whose headers are not complete
        # Bytes received for the head being read; None from its end to the end of its body.
        self._head_bytes: int | None = 0
        self._header_count = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        super().connection_made(cast(asyncio.Transport, transport))
        self._control = ConnectionControl(self.transport.abort, self._limit_send_buffer)
        if len(self.connections) > self.limits.max_connections:
            self.connections.discard(self)
            self._refuse(ServiceUnavailable(RETRY_AFTER_SECONDS))
            return
        self._header_deadline = self._arm(self.limits.header_timeout, self._headers_late)

    def _limit_send_buffer(self, size: int) -> None:
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # the connection is gone: nothing to limit
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)

    def connection_lost(self, exc: Exception | None) -> None:
        self._header_deadline = self._disarm(self._header_deadline)
        self._body_deadline = self._disarm(self._body_deadline)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        while data and not self.transport.is_closing():
            if self._head_bytes is None:  # a body: uvicorn's own flow control bounds it
                piece, data = data, b""
            else:
                room = self.limits.max_header_bytes - self._head_bytes
                if room <= 0:
                    self._refuse_head(RequestHeaderFieldsTooLarge.size(self.limits.max_header_bytes))
                    return
                # A pipelined request that begins inside `piece`, after the previous one ended,
                # is counted from the next piece: its head may pass the limit by one piece.
                piece, data = data[:room], data[room:]
                self._head_bytes += len(piece)
            super().data_received(piece)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._request_begun = True
        self._header_count = 0

    def on_url(self, url: bytes) -> None:
        if len(self.url) + len(url) > self.limits.max_url_bytes:
            self._refuse_head(UriTooLong(self.limits.max_url_bytes))
        elif not self.transport.is_closing():
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.limits.max_header_count:
            self._refuse_head(RequestHeaderFieldsTooLarge.count(self.limits.max_header_count))
        elif not self.transport.is_closing():
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self.transport.is_closing():  # refused: the parser finishes its piece, the app sees nothing
            return
        self._head_bytes = None
        self._request_begun = False
        self._header_deadline = self._disarm(self._header_deadline)
        before = self.cycle
        self.scope.setdefault("extensions", {})[CONNECTION_EXTENSION] = {"control": self._control}
        super().on_headers_complete()
        if self.cycle is not before:  # a new request (disarmed at once if it has no body)
            self._body_deadline = self._arm(self.limits.body_timeout, self._body_late)

    def on_body(self, body: bytes) -> None:
        if not self.transport.is_closing():
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self.transport.is_closing():
            return
        self._head_bytes = 0
        self._body_deadline = self._disarm(self._body_deadline)
        super().on_message_complete()

    def on_response_complete(self) -> None:
        idle = not self.pipeline
        super().on_response_complete()
        if idle and not self.transport.is_closing():
            self._disarm(self._header_deadline)
            self._header_deadline = self._arm(self.limits.header_timeout, self._headers_late)

    def send_400_response(self, msg: str) -> None:
        # uvicorn has already logged its warning; this line carries the id the client was given.
        request_id = self._refuse(MalformedRequest())
        log.info("malformed HTTP refused with 400", extra={"request_id": request_id})

    def _refuse_head(self, error: ApiError) -> None:
        if not self.transport.is_closing():
            request_id = self._refuse(error)
            log.info("oversized request head refused with %s", error.status, extra={"request_id": request_id})

    def _unsupported_upgrade_warning(self) -> None:
        # serve runs with ws="none": an Upgrade header is answered as plain HTTP, and uvicorn's
        # two warnings (one naming a missing WebSocket library) per such request are noise.
        pass

    def _arm(self, seconds: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        return self.loop.call_later(seconds, callback)

    @staticmethod
    def _disarm(handle: asyncio.TimerHandle | None) -> None:
        if handle is not None:
            handle.cancel()

    def _headers_late(self) -> None:
        self._header_deadline = None
        if self._request_begun:
            self._refuse(RequestTimeout())
        else:
            self.transport.close()

    def _body_late(self) -> None:
        if self.flow.read_paused:  # the app is not reading: not the client's fault
            self._body_deadline = self._arm(self.limits.body_timeout, self._body_late)
            return
        self._body_deadline = None
        self._refuse(RequestTimeout())

    def _refuse(self, error: ApiError) -> str:
        """Answer `error` in the error shape (unless an answer has begun) and close."""
        request_id = new_id("req")
        if self.transport.is_closing():
            return request_id
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if cycle.response_started:
                self.transport.close()
                return request_id
            cycle.disconnected = True  # the app's answer, if any, is dropped
            cycle.message_event.set()
        body = dumps(error_body(error, request_id))
        headers = [
            *self.server_state.default_headers,
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"x-request-id", request_id.encode()),
            *((k.lower().encode(), v.encode()) for k, v in error.headers().items()),
            (b"connection", b"close"),
        ]
        head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
        self.transport.write(STATUS_LINE[error.status] + head + b"\r\n" + body)
        self.transport.close()
        return request_id
