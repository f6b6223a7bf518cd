"""Simulator controls through HTTP: faults per application and provider, settle, access rules."""

from __future__ import annotations

import time

import httpx
import pytest

from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.registry import REGISTRATIONS
from payorch.runtime import Runtime
from tests.kit import Sandbox, new_application
from tests.simulator.helpers import (
    A_API,
    B,
    a_headers,
    b_headers,
    create_a,
    decide_a,
    preference_body,
)

FAULTS = "/simulator/controls/faults"
SETTLE = "/simulator/controls/settle"
GOOD_A = {"buy_order": "o", "session_id": "s", "amount": 10, "return_url": "https://shop.example/r"}


pytestmark = pytest.mark.settings(provider_timeout_seconds=0.2)


async def _fault(http: httpx.AsyncClient, sandbox: Sandbox, provider: str, mode: str) -> httpx.Response:
    return await http.post(FAULTS, json={"provider": provider, "mode": mode}, headers=sandbox.headers)


async def test_error_mode_answers_500_applies_nothing_and_only_for_that_application(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    await decide_a(sim, token, "approve")
    answer = await _fault(sim, sandbox, PROVIDER_A, "error")
    assert answer.status_code == 200 and answer.json() == {
        "provider": PROVIDER_A,
        "mode": "error",
    }

    failed = await sim.put(f"{A_API}/{token}", headers=headers)
    assert failed.status_code == 500 and failed.json() == {"error_message": "Internal Server Error"}
    assert (await sim.post(A_API, json=GOOD_A, headers=headers)).status_code == 500
    other = await new_application(runtime)
    assert (
        await sim.post(A_API, json=GOOD_A, headers=a_headers(runtime, other.application_id))
    ).status_code == 200
    b = await sim.post(
        B + "/checkout/preferences",
        json=preference_body(),
        headers=b_headers(runtime, sandbox.application_id),
    )
    assert b.status_code == 201  # the other provider is unaffected

    assert (await _fault(sim, sandbox, "provider_a", "ok")).json()["mode"] == "ok"
    committed = await sim.put(f"{A_API}/{token}", headers=headers)
    assert (
        committed.status_code == 200 and committed.json()["status"] == "AUTHORIZED"
    )  # the failed commit applied nothing


async def test_timeout_mode_answers_after_the_adapter_timeout(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    await _fault(sim, sandbox, PROVIDER_B, "timeout")
    headers = b_headers(runtime, sandbox.application_id)
    started = time.monotonic()
    answer = await sim.post(
        B + "/checkout/preferences", json=preference_body(reference="payi_t"), headers=headers
    )
    assert time.monotonic() - started >= 1.2  # provider_timeout_seconds (0.2) + 1
    assert answer.status_code == 504
    await _fault(sim, sandbox, PROVIDER_B, "ok")
    found = (
        await sim.get(f"{B}/v1/payments/search", params={"external_reference": "payi_t"}, headers=headers)
    ).json()
    assert found["paging"]["total"] == 0
    error = await _fault(sim, sandbox, PROVIDER_B, "error")
    assert error.status_code == 200
    answer = await sim.get(f"{B}/v1/payments/1", headers=headers)
    assert answer.status_code == 500 and answer.json()["error"] == "internal_server_error"


async def test_list_faults(sim: httpx.AsyncClient, sandbox: Sandbox) -> None:
    await _fault(sim, sandbox, PROVIDER_B, "error")
    answer = await sim.get(FAULTS, headers=sandbox.headers)
    items = answer.json()["items"]
    # Every registered provider, in the registry's order; only B's mode was changed.
    assert items == [
        {"provider": r.provider_id, "mode": "error" if r.provider_id == PROVIDER_B else "ok"}
        for r in REGISTRATIONS
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"provider": "provider_z", "mode": "ok"},
        {"provider": "provider_a", "mode": "slow"},
        {"provider": "provider_a"},
        {"provider": "provider_a", "mode": "ok", "extra": 1},
    ],
)
async def test_fault_validation(sim: httpx.AsyncClient, sandbox: Sandbox, body: dict[str, object]) -> None:
    answer = await sim.post(FAULTS, json=body, headers=sandbox.headers)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "VALIDATION_ERROR"


async def test_controls_need_a_sandbox_key(sim: httpx.AsyncClient, runtime: Runtime) -> None:
    body = {"provider": "provider_a", "mode": "error"}
    assert (await sim.post(FAULTS, json=body)).status_code == 401
    assert (
        await sim.post(SETTLE, json={"payment_intent_id": "payi_x", "outcome": "approve"})
    ).status_code == 401
    production = await new_application(runtime, "PRODUCTION")
    for call in (
        sim.post(FAULTS, json=body, headers=production.headers),
        sim.get(FAULTS, headers=production.headers),
        sim.post(
            SETTLE,
            json={"payment_intent_id": "payi_x", "outcome": "approve"},
            headers=production.headers,
        ),
    ):
        answer = await call
        assert answer.status_code == 403 and answer.json()["error"]["code"] == "FORBIDDEN"


async def test_settle_decides_an_open_provider_a_transaction(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers, intent_id="payi_sa")
    other = await create_a(sim, headers, intent_id="payi_sa2")  # another intent: untouched
    answer = await sim.post(
        SETTLE, json={"payment_intent_id": "payi_sa", "outcome": "approve"}, headers=sandbox.headers
    )
    assert answer.status_code == 200
    assert answer.json() == {
        "payment_intent_id": "payi_sa",
        "provider": PROVIDER_A,
        "outcome": "approve",
        "references": [token],
    }
    assert (await sim.get(f"{A_API}/{token}", headers=headers)).json()["status"] == "AUTHORIZED"
    assert (await sim.get(f"{A_API}/{other}", headers=headers)).json()["status"] == "INITIALIZED"
    again = await sim.post(
        SETTLE, json={"payment_intent_id": "payi_sa", "outcome": "reject"}, headers=sandbox.headers
    )
    assert again.status_code == 404


async def test_settle_is_scoped_to_the_application(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    await create_a(sim, a_headers(runtime, sandbox.application_id), intent_id="payi_mine")
    stranger = await new_application(runtime)
    answer = await sim.post(
        SETTLE,
        json={"payment_intent_id": "payi_mine", "outcome": "approve"},
        headers=stranger.headers,
    )
    assert answer.status_code == 404
    bad = await sim.post(
        SETTLE, json={"payment_intent_id": "payi_mine", "outcome": "maybe"}, headers=sandbox.headers
    )
    assert bad.status_code == 400


async def test_faults_leave_the_buyer_pages_alone(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    token = await create_a(sim, a_headers(runtime, sandbox.application_id))
    await _fault(sim, sandbox, "provider_a", "error")
    page = await sim.post("/simulator/provider_a/webpayserver/initTransaction", data={"token_ws": token})
    assert page.status_code == 200
    assert (await decide_a(sim, token, "approve")).status_code == 303
