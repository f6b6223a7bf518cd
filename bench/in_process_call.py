"""CPU per in-process call: payorch's direct dispatch beside httpx's own way, on one client.

    PYTHONPATH=src:. .venv/bin/python -m bench.in_process_call [--calls 5000] [--rounds 3]

A call of this service to itself (a MOCK connector calling the simulator, the simulator
notifying us) goes through ``payorch.http.client.OutgoingClient``. Both ways below make the same
call on the same client (a POST with two headers, a JSON body and a query parameter, the shape
of a provider adapter's call) to an ASGI app that answers ``{}`` at once, so the figure is the
call's own cost: ``direct`` is the client's ``request`` (the scope built directly), ``httpx`` is
``httpx.AsyncClient.request`` on the same client (request building, the client's send steps and
ASGITransport). Microseconds of the process's CPU time per call, after 200 calls to warm up.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable

import httpx
from starlette.types import Receive, Scope, Send

from payorch.http.client import LocalApp, OutgoingClient

PUBLIC = "http://127.0.0.1:8000"
URL = PUBLIC + "/simulator/provider_b/checkout/preferences"


async def answer(scope: Scope, receive: Receive, send: Send) -> None:
    await receive()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"2")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"{}"})


async def per_call(call: Callable[[], Awaitable[httpx.Response]], calls: int) -> float:
    for _ in range(200):
        await call()
    started = time.process_time()
    for _ in range(calls):
        (await call()).json()
    return 1e6 * (time.process_time() - started) / calls


async def run(calls: int, rounds: int) -> None:
    client = OutgoingClient(PUBLIC, LocalApp(answer), timeout=10)
    headers = {"Authorization": "Bearer key", "X-Idempotency-Key": "k"}
    body = {"amount": 1500, "items": [{"title": "order", "quantity": 1}]}
    params = {"source": "bench"}

    async def direct() -> httpx.Response:
        return await client.request("POST", URL, headers=headers, json=body, params=params)

    async def through_httpx() -> httpx.Response:
        return await httpx.AsyncClient.request(client, "POST", URL, headers=headers, json=body, params=params)

    for _ in range(rounds):
        for name, call in (("direct", direct), ("httpx", through_httpx)):
            print(f"{name:<7} cpu_us_per_call={await per_call(call, calls):6.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(run(args.calls, args.rounds))


if __name__ == "__main__":
    main()
