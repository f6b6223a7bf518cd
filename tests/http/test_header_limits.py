"""`payorch serve` limits a request's head itself: its size, its number of headers and its URL.

Through a real server process over raw sockets, with the default limits (16 KiB for the
request line and headers together, 100 headers, an 8 KiB URL). An oversized head is refused
in the error shape after the limit's bytes, not after the client has sent it all, and the
server's memory does not grow with what the client tries to send. SQLite: the database plays
no part here.
"""

from __future__ import annotations

import os
import selectors
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.live import children_of, live_server, payorch_env
from tests.rawhttp import address, assert_error_shape, connect

pytestmark = pytest.mark.slow

MAX_HEADER_BYTES = 16 * 1024  # the defaults, as docs/deployment.md lists them
MAX_HEADER_COUNT = 100
MAX_URL_BYTES = 8 * 1024
MIB = 1 << 20
FILLER = b"a" * (64 * 1024)


@dataclass(frozen=True)
class Pushed:
    answer: bytes  # everything the server sent until it closed
    sent: int  # bytes the client had handed to its socket when the answer came


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("heads") / "p.db"
    with live_server(payorch_env(f"sqlite:///{path}"), "--no-worker") as base:
        yield base


def _big_header(size: int) -> Iterator[bytes]:
    """A request whose one header value is `size` bytes long."""
    yield b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: "
    for _ in range(size // len(FILLER)):
        yield FILLER
    yield b"\r\n\r\n"


def _push(target: tuple[str, int], chunks: Iterable[bytes], timeout: float = 60) -> Pushed:
    """Send `chunks` until the server answers (or all are sent); then read the answer."""
    started = time.monotonic()
    sent = 0
    with connect(target) as sock, selectors.DefaultSelector() as selector:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    assert time.monotonic() - started < timeout, f"no answer after {sent} bytes"
                    if selector.select(timeout=0):
                        raise StopIteration  # the server has answered (or closed)
                    try:
                        count = sock.send(view)
                    except BlockingIOError:
                        selector.select(timeout=0.01)
                        continue
                    sent += count
                    view = view[count:]
        except (StopIteration, BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(timeout)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:  # the server closed with our unread bytes in its buffer
            pass
    return Pushed(answer, sent)


def _head(*, url_bytes: int, header_count: int, head_bytes: int) -> bytes:
    """A GET /healthz whose URL, number of headers and whole head have exactly these sizes."""
    url = b"/healthz?q=" + b"u" * (url_bytes - len(b"/healthz?q="))
    line = b"GET " + url + b" HTTP/1.1\r\n"
    headers = [b"Host: x\r\n", *(b"X-N: 1\r\n" for _ in range(header_count - 2))]
    padding = head_bytes - len(line) - sum(map(len, headers)) - len(b"X-Pad: \r\n\r\n")
    assert padding >= 0
    return line + b"".join(headers) + b"X-Pad: " + b"p" * padding + b"\r\n\r\n"


def test_a_64_mib_header_is_refused_with_431_once_it_passes_16_kib(server: str) -> None:
    pushed = _push(address(server), _big_header(64 * MIB))
    error = assert_error_shape(pushed.answer, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")
    assert error["details"] == {"max_header_bytes": MAX_HEADER_BYTES}
    assert error["connection"] == "close"
    # What the client got into its socket before the answer is bounded by the kernel's
    # buffers, far below the 64 MiB it meant to send; the server did not wait for them.
    assert pushed.sent < 8 * MIB, pushed


def test_a_hundred_thousand_headers_are_refused_with_431(server: str) -> None:
    chunks = [b"GET /healthz HTTP/1.1\r\nHost: x\r\n", *[b"X-H: 1\r\n" * 1000] * 100, b"\r\n"]
    pushed = _push(address(server), chunks)
    error = assert_error_shape(pushed.answer, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")
    # Refused at the 101st header (its 800 KB fit in the kernel's buffers: `sent` proves nothing).
    assert error["details"] == {"max_header_count": MAX_HEADER_COUNT}


def test_a_huge_url_is_refused_with_414(server: str) -> None:
    chunks = [b"GET /healthz?q=", *[FILLER] * 512, b" HTTP/1.1\r\nHost: x\r\n\r\n"]  # 32 MiB
    pushed = _push(address(server), chunks)
    error = assert_error_shape(pushed.answer, 414, "URI_TOO_LONG")
    assert error["details"] == {"max_url_bytes": MAX_URL_BYTES}
    assert pushed.sent < 8 * MIB, pushed


AT_THE_LIMITS = {"url_bytes": MAX_URL_BYTES, "header_count": MAX_HEADER_COUNT, "head_bytes": MAX_HEADER_BYTES}


def test_each_request_on_a_connection_is_held_to_the_limits_afresh(server: str) -> None:
    """Exactly at the limits is allowed, twice on one connection (the count starts again for
    each request), and a later request one byte over is refused all the same."""
    request = _head(**AT_THE_LIMITS)
    assert len(request) == MAX_HEADER_BYTES and request.count(b"\r\n") == MAX_HEADER_COUNT + 2
    with connect(address(server)) as sock, sock.makefile("rb") as answers:
        sock.settimeout(5)
        for _ in range(2):
            sock.sendall(request)
            assert answers.readline().startswith(b"HTTP/1.1 200 ")
            while answers.readline() != b"\r\n":
                pass
            assert answers.read(len(b'{"status":"ok"}')) == b'{"status":"ok"}'
        sock.sendall(_head(**{**AT_THE_LIMITS, "head_bytes": MAX_HEADER_BYTES + 1}))
        assert_error_shape(answers.read(), 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")


@pytest.mark.parametrize(
    ("over", "status", "code", "details"),
    [
        ("head_bytes", 431, "REQUEST_HEADER_FIELDS_TOO_LARGE", {"max_header_bytes": MAX_HEADER_BYTES}),
        ("header_count", 431, "REQUEST_HEADER_FIELDS_TOO_LARGE", {"max_header_count": MAX_HEADER_COUNT}),
        ("url_bytes", 414, "URI_TOO_LONG", {"max_url_bytes": MAX_URL_BYTES}),
    ],
)
def test_one_past_a_limit_is_refused(server: str, over: str, status: int, code: str, details: object) -> None:
    pushed = _push(address(server), [_head(**{**AT_THE_LIMITS, over: AT_THE_LIMITS[over] + 1})])
    assert assert_error_shape(pushed.answer, status, code)["details"] == details


def test_other_clients_are_answered_promptly_while_big_headers_are_sent(server: str) -> None:
    target = address(server)
    senders = [threading.Thread(target=_push, args=(target, _big_header(64 * MIB))) for _ in range(4)]
    for sender in senders:
        sender.start()
    slowest = 0.0
    with httpx.Client(base_url=server, timeout=30) as client:
        for _ in range(10):
            started = time.monotonic()
            assert client.get("/healthz").status_code == 200
            slowest = max(slowest, time.monotonic() - started)
    for sender in senders:
        sender.join(timeout=120)
    assert slowest < 0.5, f"/healthz took {slowest:.2f} s while 4 x 64 MiB headers were sent"


def _server_pid(base: str) -> int:
    port = base.rsplit(":", 1)[1]
    for pid in children_of(os.getpid()):
        if port in Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0"):
            return pid
    raise AssertionError(f"no child process serves port {port}")


def _memory_mb(pid: int) -> tuple[float, float]:
    """The process's resident memory now and at its peak (VmRSS, VmHWM), in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def test_twenty_connections_sending_32_mib_headers_leave_memory_where_it_was(tmp_path: Path) -> None:
    # A server of its own: what other tests did must not count in its memory.
    with live_server(payorch_env(f"sqlite:///{tmp_path}/p.db"), "--no-worker") as base:
        pid = _server_pid(base)
        before, peak_before = _memory_mb(pid)
        target = address(base)
        answers: list[Pushed] = []
        senders = [
            threading.Thread(target=lambda: answers.append(_push(target, _big_header(32 * MIB))))
            for _ in range(20)
        ]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(timeout=300)
        after, peak = _memory_mb(pid)
        assert httpx.get(base + "/healthz").status_code == 200
    # The peak too: memory spent on a head and given back would still have been spent.
    figures = f"RSS {before:.0f} MB before, {after:.0f} MB after; peak {peak_before:.0f} -> {peak:.0f} MB"
    assert after - before < 30 and peak - peak_before < 30, figures
    assert len(answers) == 20
    assert all(b" 431 " in pushed.answer.split(b"\r\n", 1)[0] for pushed in answers), answers[0]
