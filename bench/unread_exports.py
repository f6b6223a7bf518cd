"""Benchmark: one tenant opening exports it never reads, beside another tenant's list (issue 37).

    PYTHONPATH=src:. python -m bench.unread_exports [--admin-url postgresql://postgres@127.0.0.1:5432/test]
        [--rows 100000] [--rate 3] [--seconds 40] [--baseline-seconds 20] [--list-rate 10]
        [--max-exports N]

A fresh PostgreSQL database (dropped at the end): the flooding tenant has ``--rows`` payments
(bench/seeding.py, COPY, over the past year), the quiet tenant 200. One `payorch serve
--workers 1 --no-worker` with the export settings at their defaults (``--max-exports``:
PAYORCH_MAX_CONCURRENT_EXPORTS, e.g. 1000 to see the backpressure alone). The quiet tenant asks for
GET /v1/payment-intents?limit=20 ``--list-rate`` times a second: alone for
``--baseline-seconds``, then while the flooding tenant asks for ``--rate`` exports a second for
``--seconds`` (GET /v1/exports/payments of the past year as CSV, each on a connection of its
own with a 4 KiB receive buffer that reads the status line and nothing more, held open to the
end: the probe of issue 37). Prints the quiet tenant's list p50/p99/max alone and under the
flood, side by side in one run, the flood's answers by status, and the server's CPU seconds in
each phase. Loopback only; bounded by the two durations. Figures: docs/performance.md,
"Exports: one tenant's unread exports beside another".
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, urlsplit

import httpx

from bench.kit import ADMIN_URL, cpu_seconds, fresh_database, percentile, report, started_server
from bench.seeding import seed

QUIET_ROWS = 200


async def quiet_lists(url: str, api_key: str, rate: float, seconds: float) -> list[float]:
    """The quiet tenant's list, ``rate`` a second for ``seconds``: each round trip in ms."""
    headers = {"Authorization": f"Bearer {api_key}"}
    took: list[float] = []
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30, trust_env=False) as client:
        began = time.perf_counter()
        while time.perf_counter() - began < seconds:
            start = time.perf_counter()
            response = await client.get("/v1/payment-intents?limit=20")
            took.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200, response.text
            await asyncio.sleep(max(0.0, began + len(took) / rate - time.perf_counter()))
    return took


async def unread_export(url: str, api_key: str, query: str, held: list[socket.socket]) -> int:
    """One export asked for on a connection that then reads nothing: its status code. A
    connection answered 200 is kept in ``held`` (open, unread) until the flood ends."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (parts.hostname, parts.port))
    request = (
        f"GET /v1/exports/payments?{query} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {api_key}\r\n\r\n"
    )
    await loop.sock_sendall(sock, request.encode())
    head = b""
    while len(head) < 12:
        piece = await loop.sock_recv(sock, 12 - len(head))
        if not piece:
            break
        head += piece
    status = int(head[9:12]) if head.startswith(b"HTTP/1.1 ") else 0
    if status == 200:
        held.append(sock)
    else:
        sock.close()
    return status


async def flood(url: str, api_key: str, rate: float, seconds: float) -> Counter[int]:
    """``rate`` unread exports a second for ``seconds``: how many were answered with each status."""
    now = datetime.now(UTC)
    start, end = now - timedelta(days=366), now + timedelta(days=1)
    query = f"from={quote(start.isoformat())}&to={quote(end.isoformat())}&format=csv"
    held: list[socket.socket] = []
    asked: list[asyncio.Task[int]] = []
    began = time.perf_counter()
    try:
        while time.perf_counter() - began < seconds:
            asked.append(asyncio.create_task(unread_export(url, api_key, query, held)))
            await asyncio.sleep(max(0.0, began + len(asked) / rate - time.perf_counter()))
        return Counter(await asyncio.gather(*asked))
    finally:
        for sock in held:
            sock.close()


def figures(took: list[float], cpu: float) -> dict[str, float | str]:
    return {
        "p50_ms": round(statistics.median(took), 1),
        "p99_ms": round(percentile(took, 99), 1),
        "max_ms": round(max(took), 1),
        "n": len(took),
        "server_cpu_s": round(cpu, 2),
    }


async def measure(url: str, pid: int, quiet_key: str, flood_key: str, args: argparse.Namespace) -> None:
    before = cpu_seconds(pid)
    alone = await quiet_lists(url, quiet_key, args.list_rate, args.baseline_seconds)
    middle = cpu_seconds(pid)
    flooding = asyncio.create_task(flood(url, flood_key, args.rate, args.seconds))
    beside = await quiet_lists(url, quiet_key, args.list_rate, args.seconds)
    statuses = await flooding
    after = cpu_seconds(pid)
    report("quiet list, alone", figures(alone, middle - before))
    report("quiet list, beside unread exports", figures(beside, after - middle))
    ratio = statistics.median(beside) / statistics.median(alone)
    report("flood", {"answers": dict(sorted(statuses.items())), "p50_ratio": round(ratio, 2)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create a database")
    parser.add_argument("--rows", type=int, default=100_000, help="the flooding tenant's payments")
    parser.add_argument("--rate", type=float, default=3.0, help="unread exports a second")
    parser.add_argument("--seconds", type=float, default=40.0, help="how long the flood lasts")
    parser.add_argument("--baseline-seconds", type=float, default=20.0)
    parser.add_argument("--list-rate", type=float, default=10.0, help="the quiet tenant's lists a second")
    parser.add_argument(
        "--max-exports", type=int, help="PAYORCH_MAX_CONCURRENT_EXPORTS (default: its default)"
    )
    args = parser.parse_args()
    if args.max_exports is not None:
        os.environ["PAYORCH_MAX_CONCURRENT_EXPORTS"] = str(args.max_exports)  # the server's env
    with fresh_database(args.admin_url, f"payorch_unread_{int(time.time())}", migrate=True) as database_url:
        flooding = asyncio.run(seed(database_url, args.rows, None))
        quiet = asyncio.run(seed(database_url, QUIET_ROWS, None))
        with started_server(database_url, 1) as (url, _env, process):
            asyncio.run(measure(url, process.pid, str(quiet["api_key"]), str(flooding["api_key"]), args))


if __name__ == "__main__":
    main()
