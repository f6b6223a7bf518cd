"""What OpenTelemetry tracing costs, in one run (docs/performance.md, "Tracing").

    git worktree add /tmp/wt-notrace <commit before the tracing code>
    PYTHONPATH=src:. .venv/bin/python -m bench.tracing_cost --baseline-src /tmp/wt-notrace/src

Four `payorch serve --workers 2 --no-worker` servers, each on a fresh PostgreSQL database of its
own, started one at a time, in turns, and measured with bench.compare's clients (wrk creates, 64
connections; whole sandbox payments through `auto`, 16 buyers):

- ``no tracing code``: the source tree of ``--baseline-src``;
- ``tracing off``: this tree (or ``--traced-src``) with no OTEL_ variable;
- ``tracing 1.0`` and ``tracing 0.1``: that tree exporting to a local OTLP/HTTP sink (a process
  that reads each export and answers 200) with ``parentbased_traceidratio`` at that ratio.

Each figure is printed with the load average before it, and the server's CPU time per create and
per payment (its processes' user + system time over the run: less sensitive to a loaded machine
than a rate); at the end each figure summed over the turns, against ``no tracing code``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bench.kit import (
    ADMIN_URL,
    ROOT,
    cpu_seconds,
    free_port,
    fresh_database,
    load,
    report,
    sandbox_application,
    server_env,
    started_process,
    wrk,
)
from bench.sandbox_payment import PROVIDERS, run

FIGURES = ("creates/s", "cpu_ms/create", "payments/s", "cpu_ms/payment")


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that drops what it gets: the exporter's cost, not a collector's."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


def _serve_sink(port: int) -> None:
    ThreadingHTTPServer(("127.0.0.1", port), _Sink).serve_forever()


@contextmanager
def otlp_sink() -> Iterator[str]:
    port = free_port()
    process = multiprocessing.Process(target=_serve_sink, args=(port,), daemon=True)
    process.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.join()


def measure_creates(name: str, url: str, key: str, merchant: str, seconds: int, pid: int) -> tuple[float, float]:
    """(creates/s, server CPU ms per create) of a wrk run after a warm-up."""
    wrk(url, key, merchant, 3, 64)
    loadavg, before = load(), cpu_seconds(pid)
    figures = wrk(url, key, merchant, seconds, 64)
    per_create = (cpu_seconds(pid) - before) * 1000 / figures["requests"]
    errors = figures["socket_errors"] + figures["non_2xx"]
    print(
        f"{'creates, 64 conn, ' + name:<34} load={loadavg:<16} creates/s={figures['rps']} "
        f"p50_ms={figures['p50_ms']} p99_ms={figures['p99_ms']} cpu_ms/create={per_create:.3f} errors={errors}",
        flush=True,
    )
    return figures["rps"], per_create


def measure_payments(name: str, url: str, key: str, merchant: str, args: argparse.Namespace, pid: int) -> tuple[float, float]:
    """(payments/s, server CPU ms per payment) of whole sandbox payments through ``auto``."""
    before = cpu_seconds(pid)
    figures = asyncio.run(run(url, key, merchant, PROVIDERS["auto"], args.payments, args.buyers))
    per_payment = (cpu_seconds(pid) - before) * 1000 / (args.payments + 1)  # and the warm-up one
    shown: dict[str, float | str] = {"payments/s": figures["payments_per_second"], "p50_ms": figures["p50_ms"]}
    shown |= {"p99_ms": figures["p99_ms"], "cpu_ms/payment": round(per_payment, 2)}
    report(f"payments auto, {args.buyers} buyers, {name}", shown)
    return figures["payments_per_second"], per_payment


def the_variants(baseline_src: str, traced_src: str, sink: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Name -> (the src/ to run, the OTEL_ variables): the four variants (module docstring)."""

    def traced(ratio: str) -> dict[str, str]:
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": sink,
            "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": ratio,
        }

    return {
        "no tracing code": (baseline_src, {}),
        "tracing off": (traced_src, {}),
        "tracing 1.0": (traced_src, traced("1.0")),
        "tracing 0.1": (traced_src, traced("0.1")),
    }


@contextmanager
def server(
    database_url: str, src: str, otel: dict[str, str]
) -> Iterator[tuple[str, dict[str, str], subprocess.Popen[bytes]]]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    clean = {k: v for k, v in server_env(database_url, url).items() if not k.startswith("OTEL_")}
    env = {**clean, "PYTHONPATH": src, **otel}
    command = [sys.executable, "-m", "payorch", "serve", "--port", str(port), "--workers", "2", "--no-worker"]
    with started_process(command, env, url + "/openapi.json") as process:
        yield url, env, process


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-src", required=True, help="src/ of the tree without tracing")
    parser.add_argument("--traced-src", default=str(ROOT / "src"), help="src/ of the tree with it")
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--seconds", type=int, default=10, help="per create run")
    parser.add_argument("--rounds", type=int, default=2, help="turns of each measure")
    parser.add_argument("--payments", type=int, default=200, help="per payment run")
    parser.add_argument("--buyers", type=int, default=16)
    args = parser.parse_args()
    tag = uuid.uuid4().hex[:8]
    print(f"cpus={os.cpu_count()} load={load()}", flush=True)
    with ExitStack() as stack:
        sink = stack.enter_context(otlp_sink())

        variants = the_variants(args.baseline_src, args.traced_src, sink)
        databases = {
            name: stack.enter_context(fresh_database(args.admin_url, f"payorch_trace_{tag}_{n}"))
            for n, name in enumerate(variants)
        }
        applications: dict[str, tuple[str, str]] = {}
        names = list(variants)
        # Every other turn in the opposite order, so a drift of the machine's load favours none.
        results: dict[str, dict[str, list[float]]] = {name: {} for name in names}
        for turn in range(args.rounds):
            for name in names if turn % 2 == 0 else names[::-1]:
                src, otel = variants[name]
                # One server at a time: two at 2 processes each would pass PostgreSQL's 100
                # connections (20 pooled and 10 on the statement lane per process).
                with server(databases[name], src, otel) as (url, env, process):
                    if name not in applications:
                        applications[name] = sandbox_application(env)
                    key, merchant = applications[name]
                    figures = (
                        *measure_creates(name, url, key, merchant, args.seconds, process.pid),
                        *measure_payments(name, url, key, merchant, args, process.pid),
                    )
                for label, value in zip(FIGURES, figures, strict=True):
                    results[name].setdefault(label, []).append(value)
        # Summed over the turns, against the tree without tracing.
        for label in FIGURES:
            base = sum(results["no tracing code"][label])
            print(
                f"  {label}, / no tracing code: "
                + " ".join(f"{name}={sum(results[name][label]) / base:.3f}" for name in names),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
