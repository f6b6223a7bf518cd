"""A listing benchmark's target: one seeded database with payorch's app served on it in process
(httpx's ASGI transport, no network), whose GETs are timed by scenario. bench/payments_listing.py
times the payment and intent lists with it; bench/growth.py extends it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import asyncpg
import httpx

from bench.kit import SECRET_KEY
from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.runtime import Runtime


@dataclass
class Target:
    """One database, seeded to a size, with an app served in-process."""

    label: str
    url: str
    application_id: str
    api_key: str
    client: httpx.AsyncClient | None = None
    runtime: Runtime | None = None
    deep: list[str] = field(default_factory=list)
    deep_intents: list[str] = field(default_factory=list)
    samples: dict[str, list[float]] = field(default_factory=dict)

    async def open(self, requests: int) -> None:
        settings = Settings(  # type: ignore[call-arg]
            database_url=self.url,
            secret_key=SECRET_KEY,
            rate_limit="1000000/second",
            simulator_enabled=False,
        )
        self.runtime = build_runtime(settings)
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(runtime=self.runtime)),
            base_url="http://bench",
        )
        self.deep = await self.deep_pages("payments", "/v1/payments", requests)
        self.deep_intents = await self.deep_pages("payment_intents", "/v1/payment-intents", requests)

    async def deep_pages(self, table: str, path: str, requests: int) -> list[str]:
        """Random positions deep in the list (with 100 rows below each)."""
        conn = await asyncpg.connect(self.url)
        try:
            rows = await conn.fetch(
                f"SELECT id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM {table} "  # noqa: S608 - a constant
                "WHERE application_id = $1) t WHERE n > 100 ORDER BY random() LIMIT $2",
                self.application_id,
                requests,
            )
        finally:
            await conn.close()
        return [f"{path}?limit=100&cursor={r['id']}" for r in rows]

    async def get(self, scenario: str, url: str) -> None:
        assert self.client is not None
        headers = {"Authorization": f"Bearer {self.api_key}"}
        started = time.perf_counter()
        response = await self.client.get(url, headers=headers)
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, response.text
        assert response.json()["items"]  # full pages, but for a small status filter
        self.samples.setdefault(scenario, []).append(elapsed)

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        if self.runtime is not None:
            await self.runtime.close()
