"""Round trips and transactions per create and per whole sandbox payment (docs/performance.md).

    PYTHONPATH=src:. .venv/bin/python -m bench.round_trips [--database-url postgresql://...]

Serves the app in process (ASGI) on a fresh PostgreSQL database (default; or the SQLite file or
database given) and counts, per client request, what reaches the database through the engine:
transactions (BEGIN), statements, round trips (BEGIN + statements + COMMIT/ROLLBACK; asyncpg
sends each as its own exchange; a one-statement write on the statement lane, payorch.db.statements,
is one statement and one round trip) and in-process calls (the service calling its own simulator in
MOCK mode, or the simulator notifying the service). The simulator's own writes are part of a
payment and counted, including what a request does after its answer (Starlette background
tasks: provider B's notification).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import uuid
from collections import Counter
from typing import Any

import httpx
from sqlalchemy import Connection, event

from bench.kit import ADMIN_URL, fresh_database, in_process_env, sandbox_application
from bench.payment_client import PROVIDERS, one_payment
from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.config import load_settings
from payorch.db.migrate import upgrade_in_thread
from payorch.db.one_statement import OneStatement

PUBLIC_URL = "http://testserver"
ID = re.compile(r"/[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]{7,}")


async def count(database_url: str, count_of: int) -> None:
    env = in_process_env(database_url)
    os.environ.update(env)
    upgrade_in_thread(database_url)
    key, merchant = sandbox_application(env)
    runtime = build_runtime(load_settings())
    seen: Counter[str] = Counter()

    def autocommit(conn: Connection) -> bool:
        # A read on PostgreSQL (Database.reading): the driver sends no BEGIN or COMMIT.
        return conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT"

    def begin(conn: Connection) -> None:
        if not autocommit(conn):
            seen["transactions"] += 1
            seen["round_trips"] += 1

    def statement(*_: Any) -> None:
        seen["statements"] += 1
        seen["round_trips"] += 1

    def end(conn: Connection) -> None:
        if not autocommit(conn):
            seen["round_trips"] += 1

    # The statement lane (a create on PostgreSQL) does not pass through the engine's events.
    lane_run = OneStatement.run

    async def counted_run(self: OneStatement, *args: Any) -> Any:
        statement()
        return await lane_run(self, *args)

    OneStatement.run = counted_run
    engine = runtime.database.engine.sync_engine
    event.listen(engine, "begin", begin)
    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "commit", end)
    event.listen(engine, "rollback", end)
    per_request: dict[str, Counter[str]] = {}
    before: list[Counter[str]] = []

    async def started(request: httpx.Request) -> None:
        before.append(seen.copy())

    async def finished(response: httpx.Response) -> None:
        path = ID.sub("/{id}", response.request.url.path)
        step = f"{response.request.method} {path}"
        per_request.setdefault(step, Counter()).update(seen - before.pop())

    async def in_process_call(request: httpx.Request) -> None:
        seen["in_process_calls"] += 1  # a MOCK provider call or a simulator notification

    runtime.http.event_hooks["request"].append(in_process_call)
    app = create_app(runtime)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url=PUBLIC_URL,
        headers={"Authorization": f"Bearer {key}"},
        event_hooks={"request": [started], "response": [finished]},
    ) as client:
        for provider in ("auto", "b"):
            await one_payment(client, merchant, PROVIDERS[provider], -1)  # warm up
            seen.clear()
            per_request.clear()
            for n in range(count_of):
                await one_payment(client, merchant, PROVIDERS[provider], n)
            print(f"per payment, provider {provider} (averaged over {count_of}):")
            for step, figures in per_request.items():
                shown = " ".join(f"{k}={v / count_of:g}" for k, v in sorted(figures.items()))
                print(f"  {step:<50} {shown}")
            total = " ".join(f"{k}={v / count_of:g}" for k, v in sorted(seen.items()))
            print(f"  {'whole payment':<28} {total}")
    await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", help="default: a fresh PostgreSQL database")
    parser.add_argument("--payments", type=int, default=20)
    args = parser.parse_args()
    if args.database_url:
        asyncio.run(count(args.database_url, args.payments))
        return
    with fresh_database(ADMIN_URL, f"payorch_rt_{uuid.uuid4().hex[:8]}") as url:
        asyncio.run(count(url, args.payments))


if __name__ == "__main__":
    main()
