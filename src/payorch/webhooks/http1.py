"""A small HTTP/1.1 client for webhook POSTs: connects to a given (vetted) address, keeps
connections alive per (address, port, host, scheme), parses answers with httptools.

Why not httpx here: a delivery is one small POST whose answer we barely read, and a worker sends
thousands per second; httpx's per-request overhead was the bottleneck (measured in
bench/webhook_deliveries.py). Connecting to an explicit address also makes the pinning that the
URL rules need (no second DNS lookup) the only way this client can connect at all.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import httptools

IDLE_SECONDS = 30.0
MAX_IDLE_PER_KEY = 256  # one worker runs up to 256 attempts at once


class HttpError(Exception):
    """The exchange failed before a complete answer (connection refused, reset, bad answer).

    ``cause``: the connection's own error, for saying what happened (webhooks/failures.py)."""

    def __init__(self, message: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes  # at most ``max_body`` bytes of it


@dataclass(frozen=True)
class _Key:
    scheme: str
    address: str
    port: int
    host: str


class _Connection(asyncio.Protocol):
    def __init__(self, max_body: int) -> None:
        self.max_body = max_body
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.body = bytearray()
        self.headers_done = False
        self.complete = False
        # llhttp forgets keep-alive once a message is complete: remember it while it knows.
        self.keep_alive = False
        self.done: asyncio.Future[None] | None = None
        self.received_any = False
        self.closed = False
        self.truncated = False
        self.last_used = time.monotonic()

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A connection made by create_connection is a full Transport (uvloop's too, though it
        # does not subclass asyncio.Transport, so no isinstance check here).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.received_any = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._finish(HttpError(f"malformed answer: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.headers_done and not self.keep_alive:
            self._finish(None)  # a body delimited by the end of the connection
        else:
            self._finish(HttpError("connection closed before a complete answer"))

    # httptools callbacks
    def on_headers_complete(self) -> None:
        self.headers_done = True
        self.keep_alive = self._keeps_alive()

    def on_body(self, body: bytes) -> None:
        room = self.max_body - len(self.body)
        if room > 0:
            self.body += body[:room]
        if len(body) > room:
            self.truncated = True
            self._finish(None)  # enough for an excerpt; this connection is not reused

    def on_message_complete(self) -> None:
        self.complete = True
        self.keep_alive = self._keeps_alive()
        self._finish(None)

    # helpers
    def _keeps_alive(self) -> bool:
        try:
            return self.parser.should_keep_alive()
        except Exception:  # noqa: BLE001 - parser in an odd state: treat as not reusable
            return False

    def _finish(self, error: Exception | None) -> None:
        if self.done is not None and not self.done.done():
            if error is None:
                self.done.set_result(None)
            else:
                self.done.set_exception(error)

    def reusable(self) -> bool:
        return (
            self.complete
            and self.keep_alive
            and not self.closed
            and not self.truncated
            and self.transport is not None
            and not self.transport.is_closing()
        )

    async def exchange(self, request: bytes) -> Answer:
        assert self.transport is not None
        self.body = bytearray()
        self.headers_done = False
        self.complete = False
        self.keep_alive = False
        self.received_any = False
        self.truncated = False
        self.parser = httptools.HttpResponseParser(self)
        self.done = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        await self.done
        return Answer(self.parser.get_status_code(), bytes(self.body))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


@functools.cache
def _verifying_context() -> ssl.SSLContext:
    """The system's default TLS verification, built once per process (loading the CA store is
    most of what a client costs to build)."""
    return ssl.create_default_context()


class Client:
    """A pool of keep-alive connections; each request names the address to connect to."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None, max_body: int = 8192) -> None:
        self._ssl = ssl_context or _verifying_context()
        self._max_body = max_body
        self._idle: dict[_Key, list[_Connection]] = defaultdict(list)

    async def post(
        self,
        *,
        scheme: str,
        addresses: Sequence[str],
        port: int,
        host: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
    ) -> Answer:
        """POST to the first of ``addresses`` that accepts a connection (an idle one first)."""
        keys = [_Key(scheme, address, port, host) for address in addresses]
        request = _request(keys[0], target, headers, body)
        for key in keys:
            connection = self._take_idle(key)
            if connection is not None:
                try:
                    return await self._run(key, connection, request)
                except HttpError:
                    if connection.received_any:
                        raise
                    # The server closed the idle connection as we reused it: a fresh one.
                break
        error: HttpError | None = None
        for key in keys:
            try:
                connection = await self._connect(key)
            except HttpError as exc:
                error = exc
                continue
            return await self._run(key, connection, request)
        raise error or HttpError("no address to connect to")

    async def _run(self, key: _Key, connection: _Connection, request: bytes) -> Answer:
        try:
            answer = await connection.exchange(request)
        except BaseException:
            connection.close()  # errors and cancellation (the delivery's deadline) alike
            raise
        if connection.reusable() and len(self._idle[key]) < MAX_IDLE_PER_KEY:
            connection.last_used = time.monotonic()
            self._idle[key].append(connection)
        else:
            connection.close()
        return answer

    def _take_idle(self, key: _Key) -> _Connection | None:
        pool = self._idle.get(key)
        now = time.monotonic()
        while pool:
            connection = pool.pop()
            if connection.reusable() and now - connection.last_used < IDLE_SECONDS:
                return connection
            connection.close()
        return None

    async def _connect(self, key: _Key) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, protocol = await loop.create_connection(
                lambda: _Connection(self._max_body),
                host=key.address,  # an address: nothing is resolved here
                port=key.port,
                ssl=self._ssl if key.scheme == "https" else None,
                server_hostname=key.host if key.scheme == "https" else None,
            )
        except (OSError, ssl.SSLError) as exc:
            raise HttpError(f"cannot connect: {exc.__class__.__name__}", exc) from None
        return protocol

    async def aclose(self) -> None:
        for pool in self._idle.values():
            for connection in pool:
                connection.close()
        self._idle.clear()


def _request(key: _Key, target: str, headers: dict[str, str], body: bytes) -> bytes:
    host = f"[{key.host}]" if ":" in key.host else key.host
    default_port = 443 if key.scheme == "https" else 80
    host_header = host if key.port == default_port else f"{host}:{key.port}"
    lines = [f"POST {target} HTTP/1.1", f"Host: {host_header}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
