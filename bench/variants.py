"""Variants of payorch's server measured in turns: each a source tree (its src/) and extra
environment variables, served by `payorch serve --workers 2 --no-worker` on a fresh PostgreSQL
database of its own, one server at a time, every other turn in the opposite order; each measured
with wrk creates (64 connections) and whole sandbox payments through ``auto``, with the server's
CPU time per create and per payment. bench/tracing_cost.py and bench/before_after.py run it.

Also the tracing variants (no tracing code, tracing off, on at 1.0 and at 0.1) and the local
OTLP/HTTP sink their spans go to (bench/tracing_cpu.py uses them too).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bench.kit import (
    ADMIN_URL,
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
from bench.payment_client import PROVIDERS, run

# What measure_in_turns returns for each variant, one value a turn.
FIGURES = ("creates/s", "cpu_ms/create", "payments/s", "cpu_ms/payment")

# A variant: (the src/ to run, extra environment variables).
Variant = tuple[str, dict[str, str]]


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
    """A local OTLP/HTTP sink in a process of its own for the block: its URL."""
    port = free_port()
    process = multiprocessing.Process(target=_serve_sink, args=(port,), daemon=True)
    process.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.join()


def tracing_variants(baseline_src: str, traced_src: str, sink: str) -> dict[str, Variant]:
    """Name -> (the src/ to run, the OTEL_ variables): no tracing code (``baseline_src``), tracing
    off, and ``traced_src`` exporting to ``sink`` with ``parentbased_traceidratio`` at 1.0 and 0.1."""

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
    database_url: str, src: str, extra: dict[str, str]
) -> Iterator[tuple[str, dict[str, str], subprocess.Popen[bytes]]]:
    """`payorch serve --workers 2 --no-worker` of the tree ``src`` (no OTEL_ variable of ours,
    ``extra`` on top): its URL, environment and process."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    clean = {k: v for k, v in server_env(database_url, url).items() if not k.startswith("OTEL_")}
    env = {**clean, "PYTHONPATH": src, **extra}
    command = [sys.executable, "-m", "payorch", "serve", "--port", str(port), "--workers", "2", "--no-worker"]
    with started_process(command, env, url + "/openapi.json") as process:
        yield url, env, process


def measure_creates(
    name: str, url: str, key: str, merchant: str, seconds: int, pid: int
) -> tuple[float, float]:
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


def measure_payments(
    name: str, url: str, key: str, merchant: str, payments: int, buyers: int, pid: int
) -> tuple[float, float]:
    """(payments/s, server CPU ms per payment) of whole sandbox payments through ``auto``."""
    before = cpu_seconds(pid)
    figures = asyncio.run(run(url, key, merchant, PROVIDERS["auto"], payments, buyers))
    per_payment = (cpu_seconds(pid) - before) * 1000 / (payments + 1)  # and the warm-up one
    shown: dict[str, float | str] = {
        "payments/s": figures["payments_per_second"],
        "p50_ms": figures["p50_ms"],
    }
    shown |= {"p99_ms": figures["p99_ms"], "cpu_ms/payment": round(per_payment, 2)}
    report(f"payments auto, {buyers} buyers, {name}", shown)
    return figures["payments_per_second"], per_payment


def add_turn_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags ``measure_in_turns`` reads: --admin-url, --seconds, --rounds, --payments, --buyers."""
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--seconds", type=int, default=10, help="per create run")
    parser.add_argument("--rounds", type=int, default=2, help="turns of each measure")
    parser.add_argument("--payments", type=int, default=200, help="per payment run")
    parser.add_argument("--buyers", type=int, default=16)


def measure_in_turns(
    variants: dict[str, Variant], args: argparse.Namespace, database_prefix: str
) -> dict[str, dict[str, list[float]]]:
    """Each variant's FIGURES, one value per turn: ``args.rounds`` turns of creates for
    ``args.seconds`` and ``args.payments`` whole payments by ``args.buyers`` (add_turn_arguments),
    each variant on a database of its own on ``args.admin_url`` (``database_prefix``_<tag>_<n>,
    dropped at the end)."""
    tag = uuid.uuid4().hex[:8]
    names = list(variants)
    results: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    with ExitStack() as stack:
        databases = {
            name: stack.enter_context(fresh_database(args.admin_url, f"{database_prefix}_{tag}_{n}"))
            for n, name in enumerate(names)
        }
        applications: dict[str, tuple[str, str]] = {}
        for turn in range(args.rounds):
            # Every other turn in the opposite order, so a drift of the machine's load favours none.
            for name in names if turn % 2 == 0 else names[::-1]:
                src, extra = variants[name]
                # One server at a time: two at 2 processes each would pass PostgreSQL's 100
                # connections (20 pooled and 10 on the statement lane per process).
                with server(databases[name], src, extra) as (url, env, process):
                    if name not in applications:
                        applications[name] = sandbox_application(env)
                    key, merchant = applications[name]
                    figures = (
                        *measure_creates(name, url, key, merchant, args.seconds, process.pid),
                        *measure_payments(name, url, key, merchant, args.payments, args.buyers, process.pid),
                    )
                for label, value in zip(FIGURES, figures, strict=True):
                    results[name].setdefault(label, []).append(value)
    return results
