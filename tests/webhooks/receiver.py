"""A local webhook receiver for tests and the benchmark: a tiny ASGI app served by uvicorn on a
loopback address (127.x.y.z, port 8080, one of the SANDBOX ports), recording every request.

Behaviour per path: ``/status/<code>`` answers that code, ``/sleep/<seconds>`` answers 200 late,
``/late/<seconds>/<code>`` answers that code late, ``/redirect`` answers 302 to ``/ok``; anything
else answers 200 "ok". The late paths count the requests being answered at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.time() when the body was complete


@dataclass
class Receiver:
    host: str
    port: int
    requests: list[Received] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    # Requests being answered now, and the most at once, per path (concurrency caps).
    active: dict[str, int] = field(default_factory=dict)
    most_at_once: dict[str, int] = field(default_factory=dict)

    def url(self, path: str = "/hook") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def at(self, path: str) -> list[Received]:
        return [r for r in self.requests if r.path == path]

    async def wait_for(self, count: int, timeout: float = 10.0, path: str | None = None) -> None:
        deadline = time.monotonic() + timeout
        while len(self.requests if path is None else self.at(path)) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"expected {count} requests, got {len(self.requests)}")
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), remaining)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["path"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append(Received(path, headers, body, time.time()))
        self.arrived.set()
        status, extra, answer = 200, [], b"ok"
        if path.startswith("/status/"):
            status = int(path.rsplit("/", 1)[1])
            answer = b"x" * 3000 if status == 500 else b"no"
        elif path.startswith("/sleep/"):
            await self._late(path, float(path.rsplit("/", 1)[1]))
        elif path.startswith("/late/"):
            _, _, seconds, code = path.split("/")
            await self._late(path, float(seconds))
            status, answer = int(code), b"late"
        elif path == "/redirect":
            status, extra = 302, [(b"location", b"/ok")]
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"text/plain"), *extra],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    async def _late(self, path: str, seconds: float) -> None:
        self.active[path] = self.active.get(path, 0) + 1
        self.most_at_once[path] = max(self.most_at_once.get(path, 0), self.active[path])
        try:
            await asyncio.sleep(seconds)
        finally:
            self.active[path] -= 1


def loopback_socket(port: int = 8080) -> socket.socket:
    """A listening socket on a random 127.x.y.z (so parallel runs never share an address)."""
    for _ in range(50):
        host = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"  # noqa: S311
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            sock.close()
            continue
        sock.listen(1024)
        sock.setblocking(False)
        return sock
    raise RuntimeError("no free loopback address")


@contextlib.asynccontextmanager
async def serve_receiver(
    port: int = 8080, certfile: str | None = None, keyfile: str | None = None
) -> AsyncIterator[Receiver]:
    sock = loopback_socket(port)
    host, bound_port = sock.getsockname()[:2]
    receiver = Receiver(host, bound_port)
    config = uvicorn.Config(
        receiver,
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_keep_alive=30,
        timeout_graceful_shutdown=1,
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
    )
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield receiver
    finally:
        server.should_exit = True
        await task
        sock.close()
