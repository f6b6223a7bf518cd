"""CPU time of one create with tracing off, on at 1.0 and at 0.1, and without the tracing code
(docs/performance.md, "Tracing"): in process, one request at a time, so that a loaded machine
changes the figure less than it changes a rate.

    git worktree add /tmp/wt-notrace <commit before the tracing code>
    PYTHONPATH=src:. .venv/bin/python -m bench.tracing_cpu --baseline-src /tmp/wt-notrace/src

Each variant runs in a process of its own (the app of ``serve_app``, uvicorn's factory, built
from the environment, with its tracing configured as `payorch serve` does) on a PostgreSQL
database of its own, and sends ``--count`` creates (each a fresh Idempotency-Key) through
httpx's ASGI transport after 300 to warm up; the figure is the process's CPU time (user +
system, every thread: the span exporter's too) per create. The variants take turns, every other
turn in the opposite order; spans go to a local OTLP/HTTP sink that drops them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import time
import uuid
from contextlib import ExitStack

import httpx

from bench.kit import ADMIN_URL, ROOT, fresh_database, load, sandbox_application, server_env
from bench.variants import otlp_sink, tracing_variants

RESULT = re.compile(r"RESULT cpu_us=([0-9.]+)")
WARM_UP = 300


async def _creates(count: int, key: str, merchant: str) -> float:
    from payorch.composition import serve_app

    app = serve_app()
    body = {
        "merchant_account_id": merchant,
        "external_reference": "bench",
        "amount": 1500,
        "currency": "CLP",
        "return_url": "https://shop.example/return",
        "metadata": {"k": "v"},
    }
    headers = {"Authorization": f"Bearer {key}"}
    prefix = uuid.uuid4().hex[:8]
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        for n in range(WARM_UP + count):
            if n == WARM_UP:
                started = time.process_time()
            answer = await client.post(
                "/v1/payment-intents", json=body, headers={**headers, "Idempotency-Key": f"{prefix}-{n}"}
            )
            assert answer.status_code == 201, answer.text
    return (time.process_time() - started) * 1e6 / count


def child(count: int) -> int:
    cpu_us = asyncio.run(_creates(count, os.environ["BENCH_KEY"], os.environ["BENCH_MERCHANT"]))
    print(f"RESULT cpu_us={cpu_us:.1f}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-src", help="src/ of the tree without tracing")
    parser.add_argument("--traced-src", default=str(ROOT / "src"), help="src/ of the tree with it")
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--count", type=int, default=2000, help="creates per measure")
    parser.add_argument("--rounds", type=int, default=4, help="turns of each variant")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.count)
    if not args.baseline_src:
        parser.error("--baseline-src is required")
    tag = uuid.uuid4().hex[:8]
    print(f"cpus={os.cpu_count()} load={load()}", flush=True)
    with ExitStack() as stack:
        sink = stack.enter_context(otlp_sink())

        variants = tracing_variants(args.baseline_src, args.traced_src, sink)
        environments: dict[str, dict[str, str]] = {}
        for n, (name, (src, otel)) in enumerate(variants.items()):
            database = stack.enter_context(fresh_database(args.admin_url, f"payorch_tcpu_{tag}_{n}"))
            clean = {
                k: v
                for k, v in server_env(database, "http://testserver").items()
                if not k.startswith("OTEL_")
            }
            env = {**clean, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
            subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
                [sys.executable, "-m", "payorch", "migrate"], env=env, check=True, capture_output=True
            )
            key, merchant = sandbox_application(env)
            environments[name] = {**env, **otel, "BENCH_KEY": key, "BENCH_MERCHANT": merchant}
        names = list(variants)
        figures: dict[str, list[float]] = {name: [] for name in names}
        for turn in range(args.rounds):
            for name in names if turn % 2 == 0 else names[::-1]:
                loadavg = load()
                out = subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
                    [sys.executable, "-m", "bench.tracing_cpu", "--child", "--count", str(args.count)],
                    env=environments[name],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                found = RESULT.search(out)
                if found is None:
                    raise SystemExit(f"{name}: no RESULT line:\n{out}")
                figures[name].append(float(found.group(1)))
                print(f"{name:<16} load={loadavg:<16} cpu_us/create={found.group(1)}", flush=True)
        base = sorted(figures["no tracing code"])[len(figures["no tracing code"]) // 2]
        for name in names:
            values = sorted(figures[name])
            median = values[len(values) // 2]
            print(
                f"  {name:<16} median={median:.1f} us (min {values[0]:.1f}, max {values[-1]:.1f})"
                f" / no tracing code: {median / base:.3f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
