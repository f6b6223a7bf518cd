"""Steps of the reconciliation tests: ask for today's run, let a worker carry it out, read it."""

from __future__ import annotations

from typing import Any

import httpx

from payorch.reconciliation.job import ReconcileDays
from payorch.runtime import Runtime
from tests.kit import Sandbox
from tests.providers.helpers import (
    pay,
    read,
    start,
)


def today(runtime: Runtime) -> str:
    return runtime.clock.now().date().isoformat()


async def reconcile(client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime) -> dict[str, Any]:
    """POST the day, run the worker's job until it is idle, GET the report."""
    asked = await client.post(
        "/v1/reports/reconciliation", json={"date": today(runtime)}, headers=sandbox.headers
    )
    assert asked.status_code == 202, asked.text
    while await ReconcileDays().run_once(runtime):
        pass
    return await report(client, sandbox, runtime)


async def report(client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime) -> dict[str, Any]:
    answer = await client.get(
        "/v1/reports/reconciliation", params={"date": today(runtime)}, headers=sandbox.headers
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["run"]["status"] == "DONE", answer.text
    return dict(answer.json())


def of_provider(body: dict[str, Any], provider: str) -> dict[str, Any]:
    [found] = [p for p in body["providers"] if p["provider"] == provider]
    return dict(found)


def kinds(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted((f["provider"], f["kind"], f["action"]) for f in body["findings"])


C = "provider_c_redirect_get"


async def paid(
    client: httpx.AsyncClient, sandbox: Sandbox, provider: str, amount: int = 1500
) -> dict[str, Any]:
    intent, body = await start(client, sandbox, provider, amount=amount)
    await pay(client, body, "approve")
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    return intent


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


async def made(client: httpx.AsyncClient, sandbox: Sandbox, **body: Any) -> dict[str, Any]:
    answer = await discrepancy(client, sandbox, **body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def discrepancy(client: httpx.AsyncClient, sandbox: Sandbox, **body: Any) -> httpx.Response:
    return await client.post("/simulator/controls/discrepancies", json=body, headers=sandbox.headers)
