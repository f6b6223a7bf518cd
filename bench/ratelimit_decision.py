"""Cost of the rate limiter's per-request decision (API key from the cache + counter), memory
and Redis storage.

    PYTHONPATH=src:. python -m bench.ratelimit_decision [--redis-url redis://127.0.0.1:6379/0]

Uses a throwaway SQLite database for the application and its key. Prints microseconds per
decision, sequential (the latency a request pays; with Redis, one round trip).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time

from payorch.applications.service import create_application
from payorch.clock import SystemClock
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.db.migrate import upgrade_in_thread
from payorch.ratelimit.middleware import RateLimitMiddleware

SECRET = "bench-secret-key-0123456789abcdef0123456789"  # noqa: S105 - a throwaway database


async def noop(*_: object) -> None:
    return None


async def measure(database_url: str, redis_url: str | None, n: int) -> float:
    settings = Settings(  # type: ignore[call-arg]
        database_url=database_url,
        secret_key=SECRET,
        rate_limit="1000000/second",
        redis_url=redis_url,
    )
    runtime = build_runtime(settings)
    try:
        async with runtime.database.transaction() as conn:
            app = await create_application(
                conn, SystemClock(), name="bench", environment="SANDBOX", merchant_name=None
            )
        middleware = RateLimitMiddleware(noop, runtime)
        scope = {
            "type": "http",
            "path": "/v1/payments",
            "headers": [(b"authorization", f"Bearer {app.api_key}".encode())],
            "client": ("192.0.2.1", 1),
        }
        await middleware._decide(scope)  # warm: key cached, connection open
        started = time.perf_counter()
        for _ in range(n):
            await middleware._decide(scope)
        return (time.perf_counter() - started) / n * 1e6
    finally:
        await runtime.close()


async def main_async(redis_url: str, n: int) -> None:
    url = f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    await asyncio.to_thread(upgrade_in_thread, url)
    for label, redis in (("memory", None), ("redis", redis_url)):
        print(f"{label}: {await measure(url, redis, n):.1f} us per decision ({n} sequential)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--requests", type=int, default=5000)
    args = parser.parse_args()
    asyncio.run(main_async(args.redis_url, args.requests))


if __name__ == "__main__":
    main()
