"""A webhook receiver for the benchmark: answers 200 at once and remembers when each notice arrived.

Run: python bench/webhook_receiver.py  -> prints "http://127.x.y.z:8080" when listening.
GET /__stats answers {"received": [[event_id, unix_time], ...]}.
"""

from __future__ import annotations

import random
import socket
import sys
import time
from typing import Any

import orjson
import uvicorn

received: list[tuple[str, float]] = []


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    if scope["path"] == "/__stats":
        body = orjson.dumps({"received": received})
    else:
        event_id = ""
        for name, value in scope["headers"]:
            if name == b"x-pay-event-id":
                event_id = value.decode()
        received.append((event_id, time.time()))
        body = b"ok"
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    for _ in range(50):
        host = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"  # noqa: S311
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, 8080))
            break
        except OSError:
            sock.close()
    else:
        raise SystemExit("no free loopback address")
    sock.listen(4096)
    print(f"http://{host}:8080", flush=True)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        http="httptools",
        loop="uvloop",
        backlog=4096,
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
