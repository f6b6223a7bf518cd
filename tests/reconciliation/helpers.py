"""Steps of the reconciliation tests: ask for today's run, let a worker carry it out, read it."""

from __future__ import annotations

from typing import Any

import httpx

from payorch.reconciliation.job import ReconcileDays
from payorch.runtime import Runtime
from tests.conftest import Sandbox


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
