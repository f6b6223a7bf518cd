"""Verifying a chain of 1,000,000 activity entries: time and peak memory, beside a floor.

    PYTHONPATH=src:. python -m bench.activity_verify [--entries 1000000] [--backend sqlite|postgresql]
        [--admin-url postgresql://postgres@127.0.0.1:5432/test]

A fresh database (a SQLite file in a temporary directory, or a fresh PostgreSQL database),
migrated; one application whose chain of N entries is written directly (each hash computed by
payorch.activity.chain.content_hash, rows inserted 10,000 a statement, the head set to the
last), then, each in a process of its own so its peak resident memory (ru_maxrss) is its own:

- the floor: the same rows read in the same 5,000-row seq batches with the same statement, and
  nothing else (no entry built, no hash);
- `payorch activity verify --application-id app_...`: the whole walk.

Prints the seconds and peak RSS of each, and entries/s. Figures: docs/performance.md,
"Activity log: verifying 1,000,000 entries".
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert, select

from bench.kit import ADMIN_URL, ROOT, SECRET_KEY, create_database, drop_database, load
from payorch.activity.chain import GENESIS, content_hash
from payorch.activity.records import Actor, Origin
from payorch.applications.service import create_application
from payorch.clock import SystemClock
from payorch.db import Database
from payorch.db.migrate import upgrade
from payorch.db.tables.activity import activity_heads, activity_log
from payorch.ids import new_id

BATCH = 10_000


async def seed(url: str, count: int) -> str:
    """A new application with ``count`` chained entries; its id."""
    database = Database(url)
    try:
        async with database.transaction() as conn:
            created = await create_application(
                conn, SystemClock(), name="bench", environment="SANDBOX", merchant_name="shop"
            )
        application = created.application_id
        start = datetime.now(UTC) - timedelta(days=30)
        actor, origin = Actor("api_key", "key_bench"), Origin("203.0.113.7", "bench/1.0", "req_bench")
        previous = GENESIS
        for first in range(1, count + 1, BATCH):
            rows = []
            for seq in range(first, min(first + BATCH, count + 1)):
                at = start + timedelta(milliseconds=seq)
                entry_id = new_id("act", int(at.timestamp() * 1000))
                changes = {"amount": seq % 100_000, "status": "SUCCEEDED"}
                digest = content_hash(
                    previous_hash=previous, id=entry_id, application_id=application, seq=seq, at=at,
                    actor=actor, action="refund.created", resource_type="refund",
                    resource_id=f"rfd_{seq}", outcome="success", origin=origin, changes=changes,
                )  # fmt: skip
                rows.append(
                    {
                        "id": entry_id, "application_id": application, "seq": seq, "at": at,
                        "actor_type": actor.type, "actor_id": actor.id, "actor_email": None,
                        "action": "refund.created", "resource_type": "refund",
                        "resource_id": f"rfd_{seq}", "outcome": "success", "origin_ip": origin.ip,
                        "origin_user_agent": origin.user_agent, "request_id": origin.request_id,
                        "changes": changes, "previous_hash": previous, "hash": digest,
                    }
                )  # fmt: skip
                previous = digest
            async with database.transaction() as conn:
                await conn.execute(insert(activity_log), rows)
        async with database.transaction() as conn:
            await conn.execute(
                insert(activity_heads).values(
                    application_id=application, seq=count, hash=previous, updated_at=start
                )
            )
        return application
    finally:
        await database.dispose()


async def floor(url: str, application: str) -> int:
    """The rows read as verify reads them, and nothing more: how many."""
    database = Database(url)
    # The statement of payorch.activity.repository.oldest_after, the rows not made entries.
    statement = (
        select(activity_log).where(activity_log.c.application_id == application).order_by(activity_log.c.seq)
    )
    read, after = 0, 0
    try:
        while True:
            async with database.reading() as conn:
                rows = (await conn.execute(statement.where(activity_log.c.seq > after).limit(5000))).all()
            if not rows:
                return read
            read += len(rows)
            after = rows[-1].seq
    finally:
        await database.dispose()


def timed(args: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Seconds, peak RSS (KiB) and output of a process."""
    began = time.perf_counter()
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # noqa: S603
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - began
    if status != 0:
        raise SystemExit(f"{args} failed: {out}")
    return seconds, usage.ru_maxrss, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--floor", nargs=2, metavar=("URL", "APP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        print(asyncio.run(floor(*args.floor)))
        return
    with tempfile.TemporaryDirectory() as directory:
        if args.backend == "sqlite":
            url, dropped = f"sqlite:///{directory}/activity.db", ""
        else:
            url = dropped = asyncio.run(create_database(args.admin_url))
        try:
            upgrade(url)
            began = time.perf_counter()
            application = asyncio.run(seed(url, args.entries))
            print(f"seeded {args.entries:,} entries in {time.perf_counter() - began:.0f} s ({args.backend})")
            env = {
                **os.environ,
                "PAYORCH_DATABASE_URL": url,
                "PAYORCH_SECRET_KEY": SECRET_KEY,
                "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
            }
            python = sys.executable
            floor_s, floor_kib, floor_out = timed(
                [python, "-m", "bench.activity_verify", "--floor", url, application], env
            )
            assert int(floor_out.strip()) == args.entries, floor_out
            verify_s, verify_kib, verify_out = timed(
                [python, "-m", "payorch", "activity", "verify", "--application-id", application], env
            )
            assert f"{args.entries} entries verified" in verify_out, verify_out
            for name, seconds, kib in (
                ("floor (read only)", floor_s, floor_kib),
                ("verify", verify_s, verify_kib),
            ):
                print(
                    f"{name}: {seconds:.1f} s, {args.entries / seconds:,.0f} entries/s, peak RSS {kib / 1024:.0f} MiB"
                )
            print(load())
        finally:
            if dropped:
                asyncio.run(drop_database(args.admin_url, dropped))


if __name__ == "__main__":
    main()
