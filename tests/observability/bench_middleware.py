"""Cost of MetricsMiddleware (run by hand, not collected by pytest):

    PYTHONPATH=src:. python tests/observability/bench_middleware.py

1. per request, around a trivial ASGI app (the middleware alone);
2. create-intent through the whole app in-process on SQLite, with and without it.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from typing import Any

import httpx

from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.db.migrate import upgrade_in_thread
from payorch.observability.middleware import MetricsMiddleware
from tests.kit import make_settings, new_application


async def _trivial(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def _noop_send(message: Any) -> None:
    return None


async def _receive() -> Any:
    return {"type": "http.request", "body": b""}


async def micro(n: int = 200_000) -> tuple[float, float]:
    scope = {"type": "http", "method": "POST", "path": "/v1/payment-intents"}
    wrapped = MetricsMiddleware(_trivial)
    timings = {}
    for name, app in (("bare", _trivial), ("metrics", wrapped)):
        started = time.perf_counter()
        for _ in range(n):
            await app(dict(scope), _receive, _noop_send)
        timings[name] = (time.perf_counter() - started) / n * 1e6
    return timings["bare"], timings["metrics"]


async def macro(rounds: int = 5, per_round: int = 300) -> dict[str, float]:
    path = tempfile.mkdtemp() + "/bench.db"
    url = f"sqlite:///{path}"
    upgrade_in_thread(url)
    runtime = build_runtime(make_settings(url))
    sandbox = await new_application(runtime)
    with_app = create_app(runtime=runtime)
    without_app = create_app(runtime=runtime)
    without_app.user_middleware = [m for m in without_app.user_middleware if m.cls is not MetricsMiddleware]
    body = {
        "merchant_account_id": sandbox.merchant_account_id,
        "external_reference": "bench",
        "amount": 1500,
        "currency": "CLP",
        "return_url": "https://shop.example/return",
    }
    results: dict[str, list[float]] = {"with": [], "without": []}
    clients = {
        name: httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")
        for name, app in (("with", with_app), ("without", without_app))
    }
    for http in clients.values():  # warm up
        for _ in range(50):
            await http.post("/v1/payment-intents", json=body, headers=sandbox.headers)
    for _ in range(rounds):
        for name, http in clients.items():
            started = time.perf_counter()
            for _ in range(per_round):
                response = await http.post("/v1/payment-intents", json=body, headers=sandbox.headers)
                assert response.status_code == 201
            results[name].append(per_round / (time.perf_counter() - started))
    for http in clients.values():
        await http.aclose()
    await runtime.close()
    return {name: statistics.median(values) for name, values in results.items()}


async def healthz(rounds: int = 10, per_round: int = 1000) -> dict[str, float]:
    """The cheapest route in-process: the middleware's share is the largest it can be."""
    runtime = build_runtime(make_settings("sqlite://"))
    apps = {"with": create_app(runtime=runtime), "without": create_app(runtime=runtime)}
    apps["without"].user_middleware = [
        m for m in apps["without"].user_middleware if m.cls is not MetricsMiddleware
    ]
    results: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(rounds):
        for name, app in apps.items():
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://testserver"
            ) as http:
                started = time.perf_counter()
                for _ in range(per_round):
                    await http.get("/healthz")
                results[name].append((time.perf_counter() - started) / per_round * 1e6)
    await runtime.close()
    return {name: min(values) for name, values in results.items()}


async def main() -> None:
    bare, wrapped = await micro()
    print(
        f"micro: bare {bare:.2f} us/request, with metrics {wrapped:.2f} us/request, "
        f"overhead {wrapped - bare:.2f} us"
    )
    per_request = await healthz()
    print(
        f"GET /healthz in-process (best of 10): without {per_request['without']:.0f} us, "
        f"with {per_request['with']:.0f} us"
    )
    rates = await macro()
    print(
        f"create-intent in-process (SQLite): without {rates['without']:.0f} req/s, "
        f"with {rates['with']:.0f} req/s"
    )


if __name__ == "__main__":
    asyncio.run(main())
