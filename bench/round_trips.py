"""Round trips and transactions per create and per whole sandbox payment (docs/performance.md).

    PYTHONPATH=src:. .venv/bin/python -m bench.round_trips [--payments 3] [--show-sql]
        [--database-url postgresql://...]

Serves the app in process (ASGI) on a fresh PostgreSQL database (default; or the SQLite file or
database given) and counts, per client request, what reaches the database: transactions (BEGIN),
statements, round trips (BEGIN + statements + COMMIT/ROLLBACK, each its own exchange) and
in-process calls (the service calling its own simulator in MOCK mode, or the simulator notifying
the service). On PostgreSQL the count is taken on the driver (asyncpg), where every path meets:
the engine's statements, the prepared statements run on the driver (payorch.db.prepared) and
the one-statement writes (payorch.db.one_statement); on SQLite, on the engine's events. The
simulator's own writes are part of a payment and counted, including what a request does after
its answer (Starlette background tasks: provider B's notification). ``--show-sql`` lists each
payment step's statements (the last payment's).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import asyncpg
import httpx
from asyncpg.prepared_stmt import PreparedStatement
from sqlalchemy import event

import payorch.http.client as outgoing
from bench.kit import ADMIN_URL, fresh_database, in_process_env, sandbox_application
from bench.payment_client import PROVIDERS, one_payment
from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.config import load_settings
from payorch.db.migrate import upgrade_in_thread
from payorch.runtime import Runtime

PUBLIC_URL = "http://testserver"
BIND_EXECUTE = "_PreparedStatement__bind_execute"  # a prepared statement's run (name-mangled)
ID = re.compile(r"/[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]{7,}")


def count_on_driver(sent: Callable[[str], None]) -> None:
    """Each exchange asyncpg has with PostgreSQL: a simple query (``execute`` without arguments:
    BEGIN, COMMIT...), a statement with arguments, a prepared statement's run."""
    execute, run = asyncpg.Connection.execute, asyncpg.Connection._execute
    bind_execute = getattr(PreparedStatement, BIND_EXECUTE)

    async def counted_execute(self: asyncpg.Connection, query: str, *args: Any, **kw: Any) -> Any:
        if not args:
            sent(query)
        return await execute(self, query, *args, **kw)

    async def counted_run(self: asyncpg.Connection, query: str, *args: Any, **kw: Any) -> Any:
        sent(query)
        return await run(self, query, *args, **kw)

    async def counted_bind_execute(self: PreparedStatement, *args: Any) -> Any:
        sent(self.get_query())
        return await bind_execute(self, *args)

    asyncpg.Connection.execute = counted_execute
    asyncpg.Connection._execute = counted_run
    setattr(PreparedStatement, BIND_EXECUTE, counted_bind_execute)


def count_on_engine(runtime: Runtime, sent: Callable[[str], None]) -> None:
    """SQLite: every statement goes through the engine."""
    engine = runtime.database.engine.sync_engine
    event.listen(engine, "begin", lambda _conn: sent("BEGIN"))
    event.listen(engine, "before_cursor_execute", lambda *a: sent(a[2]))
    event.listen(engine, "commit", lambda _conn: sent("COMMIT"))
    event.listen(engine, "rollback", lambda _conn: sent("ROLLBACK"))


def count_in_process_calls(counted: Callable[[], None]) -> None:
    """Each call to the in-process app, direct (payorch.http.client) or through httpx's way."""
    dispatch = outgoing._dispatch
    handle = outgoing.SelfDispatchTransport.handle_async_request

    async def counted_dispatch(*args: Any) -> Any:
        counted()
        return await dispatch(*args)

    async def counted_handle(self: outgoing.SelfDispatchTransport, request: httpx.Request) -> Any:
        counted()
        return await handle(self, request)

    outgoing._dispatch = counted_dispatch
    outgoing.SelfDispatchTransport.handle_async_request = counted_handle


async def count(database_url: str, count_of: int, show_sql: bool) -> None:
    env = in_process_env(database_url)
    os.environ.update(env)
    upgrade_in_thread(database_url)
    key, merchant = sandbox_application(env)
    runtime = build_runtime(load_settings())
    seen: Counter[str] = Counter()
    statements: list[str] = []

    def sent(query: str) -> None:
        words = query.lstrip().split(None, 1)
        first = words[0].upper().rstrip(";") if words else ""
        if first == "BEGIN":
            seen["transactions"] += 1
        elif first not in ("COMMIT", "ROLLBACK"):
            seen["statements"] += 1
            statements.append(" ".join(query.split())[:150])
        seen["round_trips"] += 1

    def in_process_call() -> None:
        seen["in_process_calls"] += 1  # a MOCK provider call or a simulator notification

    if runtime.database.engine.dialect.name == "postgresql":
        count_on_driver(sent)
    else:
        count_on_engine(runtime, sent)
    count_in_process_calls(in_process_call)
    per_request: dict[str, Counter[str]] = {}
    before: list[Counter[str]] = []
    shown_sql: dict[str, list[str]] = {}

    async def started(request: httpx.Request) -> None:
        before.append(seen.copy())
        statements.clear()

    async def finished(response: httpx.Response) -> None:
        path = ID.sub("/{id}", response.request.url.path)
        step = f"{response.request.method} {path}"
        per_request.setdefault(step, Counter()).update(seen - before.pop())
        shown_sql[step] = list(statements)

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
            await asyncio.sleep(0.5)  # provider B's notification, sent after its answer
            print(f"per payment, provider {provider} (averaged over {count_of}):")
            for step, figures in per_request.items():
                shown = " ".join(f"{k}={v / count_of:g}" for k, v in sorted(figures.items()))
                print(f"  {step:<50} {shown}")
                if show_sql:
                    for sql in shown_sql[step]:
                        print(f"      {sql}")
            total = " ".join(f"{k}={v / count_of:g}" for k, v in sorted(seen.items()))
            print(f"  {'whole payment':<28} {total}")
    await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", help="default: a fresh PostgreSQL database")
    parser.add_argument("--payments", type=int, default=20)
    parser.add_argument("--show-sql", action="store_true", help="each step's statements")
    args = parser.parse_args()
    if args.database_url:
        asyncio.run(count(args.database_url, args.payments, args.show_sql))
        return
    with fresh_database(ADMIN_URL, f"payorch_rt_{uuid.uuid4().hex[:8]}") as url:
        asyncio.run(count(url, args.payments, args.show_sql))


if __name__ == "__main__":
    main()
