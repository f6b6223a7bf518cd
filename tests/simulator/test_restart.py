"""Simulator state lives in the database: a checkout started before a restart (or on another
replica) finishes after it; the worker knows the notification job."""

from __future__ import annotations

import httpx

from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.runtime import Runtime
from payorch.simulator.jobs import DeliverSimulatorNotifications
from payorch.worker.jobs import default_jobs
from tests.kit import make_settings, new_application
from tests.simulator.helpers import (
    A_API,
    B,
    a_headers,
    b_headers,
    create_a,
    create_b,
    decide_a,
    pay_b,
    query_of,
)


def _replica(database_url: str) -> tuple[Runtime, httpx.AsyncClient]:
    runtime = build_runtime(make_settings(database_url))  # its own engine and pool: a new process
    app = create_app(runtime=runtime)
    return runtime, httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


async def test_a_checkout_survives_a_restart(database_url: str) -> None:
    first, http = _replica(database_url)
    sandbox = await new_application(first)
    a = a_headers(first, sandbox.application_id)
    b = b_headers(first, sandbox.application_id)
    async with http:
        token = await create_a(http, a)
        preference = await create_b(http, b, notification_url=None, reference="payi_restart")
        await http.post(
            "/simulator/controls/faults",
            json={"provider": "provider_a", "mode": "error"},
            headers=sandbox.headers,
        )
    await first.close()

    second, http = _replica(database_url)
    async with http:
        assert (await http.put(f"{A_API}/{token}", headers=a)).status_code == 500  # the fault survived too
        await http.post(
            "/simulator/controls/faults",
            json={"provider": "provider_a", "mode": "ok"},
            headers=sandbox.headers,
        )
        assert (await decide_a(http, token, "approve")).status_code == 303
        assert (await http.put(f"{A_API}/{token}", headers=a)).json()["status"] == "AUTHORIZED"
        payment_id = query_of(await pay_b(http, preference["id"], "approve"))["payment_id"]
        assert (await http.get(f"{B}/v1/payments/{payment_id}", headers=b)).json()["status"] == "approved"
    await second.close()


def test_the_worker_resends_simulator_notifications() -> None:
    assert any(isinstance(job, DeliverSimulatorNotifications) for job in default_jobs())
