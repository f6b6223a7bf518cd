"""HTTP/1.1 over raw sockets, for tests of what happens below any HTTP client: half-sent
requests, malformed bytes, connections the server refuses or cuts."""

from __future__ import annotations

import json
import re
import socket
import struct
from urllib.parse import urlsplit

NO_LINGER = struct.pack("ii", 1, 0)
PAYORCH_REQUEST_ID = r"req_[0-9a-z]{29}"


def address(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    assert parts.hostname and parts.port
    return parts.hostname, parts.port


def connect(address: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(address, timeout=5)
    # Close with RST: no TIME_WAIT left behind on the shared machine's ephemeral ports.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, NO_LINGER)
    return sock


def read_answer(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes (b"" when it closes without a word)."""
    sock.settimeout(timeout)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def assert_error_shape(
    raw: bytes, status: int, code: str, request_id: str = PAYORCH_REQUEST_ID
) -> dict[str, object]:
    """One answer in the API's error shape; returns its lower-cased headers and error fields."""
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    assert int(status_line.split()[1]) == status, raw
    assert headers["content-type"] == "application/json"
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message", "request_id", "details"}
    assert error["code"] == code and error["message"]
    assert re.fullmatch(request_id, error["request_id"]) and headers["x-request-id"] == error["request_id"]
    return {**headers, **error}
