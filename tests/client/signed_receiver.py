"""A webhook receiver that verifies each delivery's signature with payorch.client.webhooks.verify
(as a consumer would), in a thread: for tests that drive payorch as separate processes or
containers and need to see its signed webhooks arrive. While ``accepting`` is False it answers
503 (a receiver that is down) and keeps nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from payorch.client import Event, WebhookVerificationError
from payorch.client.webhooks import verify
from tests.webhooks.receiver import loopback_socket


@dataclass
class Receiver:
    secret: str = ""
    events: dict[str, Event] = field(default_factory=dict)
    deliveries: int = 0
    rejected: int = 0
    refused: int = 0  # answered 503 while not accepting
    accepting: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def webhook_receiver() -> Iterator[tuple[str, Receiver]]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if not state.accepting:
                with state.lock:
                    state.refused += 1
                self.send_response(503)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            try:
                event = verify(body, dict(self.headers.items()), state.secret)
            except WebhookVerificationError:
                with state.lock:
                    state.rejected += 1
                self.send_response(400)
            else:
                with state.lock:
                    state.deliveries += 1
                    state.events.setdefault(event.id, event)  # deduplicate by event id
                self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    # Port 8080 (a SANDBOX port) on a random 127.x.y.z: parallel tests never share the address.
    sock = loopback_socket(8080)
    sock.setblocking(True)
    server = ThreadingHTTPServer(sock.getsockname(), Handler, bind_and_activate=False)
    server.socket.close()
    server.socket = sock
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[0], state
    finally:
        server.shutdown()
        server.server_close()


def wait_for_events(receiver: Receiver, wanted: set[tuple[str, str]], timeout: float = 60) -> None:
    """Until every (payment intent id, event type) of ``wanted`` has arrived, signed."""
    deadline = time.monotonic() + timeout
    while True:
        with receiver.lock:
            got = {(e.payment_intent_id, e.type) for e in receiver.events.values()}
        if wanted <= got:
            return
        assert time.monotonic() < deadline, f"missing webhooks: {wanted - got}"
        time.sleep(0.2)
