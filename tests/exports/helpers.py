"""Shared steps of the exports' streaming tests: payments enough to fill every buffer, an export
whose reader takes nothing, whether the server still holds a connection."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote, urlsplit

import httpx

from payorch.runtime import Runtime
from tests.kit import Sandbox, authorized_payment

# Rows enough that an unread export fills every buffer between the server and the reader (the
# server's 64 KiB, the kernel's on both ends, a proxy's) many times over: ~700 KB of JSON lines.
ROWS = 1500


async def seed(runtime: Runtime, app: Sandbox) -> str:
    """``app`` with ROWS payments; the query of an export of all of them as JSON lines."""
    began = datetime.now(UTC) - timedelta(seconds=1)
    for _ in range(ROWS):
        await authorized_payment(runtime, app, external_reference="r" * 60)
    ended = datetime.now(UTC) + timedelta(seconds=1)
    return f"from={quote(began.isoformat())}&to={quote(ended.isoformat())}&format=jsonl"


@contextmanager
def unread_export(url: str, app: Sandbox, query: str) -> Iterator[socket.socket]:
    """An export asked for on a connection that then reads nothing after the status line."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a reader's buffer fills at once
    sock.connect((parts.hostname, parts.port))
    try:
        sock.sendall(
            f"GET /v1/exports/payments?{query} HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {app.api_key}\r\n\r\n".encode()
        )
        sock.settimeout(10)
        assert sock.recv(12) == b"HTTP/1.1 200", "the export began: its slot is taken"
        yield sock
    finally:
        sock.close()


def export(url: str, app: Sandbox, query: str) -> httpx.Response:
    return httpx.get(f"{url}/v1/exports/payments?{query}", headers=app.headers, timeout=30)


def answered_within(url: str, app: Sandbox, query: str, seconds: float) -> httpx.Response:
    """The first export answered 200 within ``seconds`` (a slot frees as the server notices)."""
    deadline = time.monotonic() + seconds
    while True:
        response = export(url, app, query)
        if response.status_code == 200 or time.monotonic() > deadline:
            return response
        time.sleep(0.1)


def server_holds(client: socket.socket) -> bool:
    """Whether a process still holds the server's end of ``client``'s connection: Linux lists a
    socket that no process holds any more (closed while the kernel still sends what it had)
    with inode 0 in /proc/net/tcp."""
    server_port, client_port = client.getpeername()[1], client.getsockname()[1]
    ends = (f":{server_port:04X}", f":{client_port:04X}")
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return any(
        (fields[1][-5:], fields[2][-5:]) == ends and fields[9] != "0"
        for fields in (row.split() for row in rows)
    )
