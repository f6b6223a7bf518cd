"""A provider as slow as a real one: ``payorch serve``'s app whose in-process simulator answers each
provider call after a lognormal delay (bench/added_latency.py serves it with uvicorn).

The delay is drawn per call from a lognormal with the median and 99th percentile given in
``BENCH_PROVIDER_LATENCY_MS`` ("120,380" by default: sigma = ln(p99 / p50) / 2.326). Only the
provider API of the simulator waits (the calls payorch's connectors make, paths under
/simulator/ reached in process); the buyer's pages at the simulator and the simulator's
notifications to payorch do not. Nothing in src/ knows of it: the factory binds the delayed
in-process app before ``create_app`` binds its own (the first binding wins, http/client.py)."""

from __future__ import annotations

import asyncio
import math
import os
import random

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from payorch.app import create_app, create_in_process_app
from payorch.composition import build_runtime
from payorch.config import load_settings
from payorch.logs import configure_logging

VARIABLE = "BENCH_PROVIDER_LATENCY_MS"
Z99 = 2.326  # the standard normal's 99th percentile


def lognormal(p50_ms: float, p99_ms: float) -> tuple[float, float]:
    """(mu, sigma) of the lognormal, in seconds, whose median and p99 are those given."""
    return math.log(p50_ms / 1000), math.log(p99_ms / p50_ms) / Z99


def latency_from_environment() -> tuple[float, float]:
    p50, p99 = (float(part) for part in os.environ.get(VARIABLE, "120,380").split(","))
    return p50, p99


class ProviderLatency:
    """Waits a lognormal delay before each provider call the simulator answers in process."""

    def __init__(self, app: ASGIApp, p50_ms: float, p99_ms: float) -> None:
        self.app = app
        self.mu, self.sigma = lognormal(p50_ms, p99_ms)
        self.random = random.Random(41)  # noqa: S311 - a delay, not a secret

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/simulator/"):
            await asyncio.sleep(self.random.lognormvariate(self.mu, self.sigma))
        await self.app(scope, receive, send)


def slow_provider_app() -> FastAPI:
    """uvicorn's factory: as payorch.composition.serve_app, with the delayed simulator."""
    configure_logging()
    runtime = build_runtime(load_settings())
    runtime.local_app.bind(ProviderLatency(create_in_process_app(runtime), *latency_from_environment()))
    return create_app(runtime)
