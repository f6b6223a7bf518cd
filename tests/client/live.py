"""A real uvicorn server on 127.0.0.1 in a background thread, for clients that need a socket
(the sync client, schemathesis). The app gets its own Runtime, built and closed in the server's
event loop; tests share the database with it through the session's `database_url`."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from payorch.app import create_app
from payorch.composition import build_runtime
from tests.conftest import make_settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def live_server(database_url: str, **overrides: object) -> Iterator[str]:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    settings = make_settings(database_url, public_url=base_url, **overrides)
    app = create_app(runtime=build_runtime(settings))
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the live server did not start")
        time.sleep(0.02)
    try:
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=15)
