"""Simulated provider A's deferred capture over HTTP (docs/simulator.md, "Holds"): a transaction
made with a deferred-capture commerce code is held once approved and committed; one capture of at
most the authorized amount, credit cards only; a full refund of the hold releases it; the clock
control lets it lapse. Both the application's MOCK deferred code and the published 597055555540."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.providers.provider_a.registration import mock_deferred_credentials
from payorch.runtime import Runtime
from payorch.simulator.provider_a.credentials import PUBLIC_A_API_KEY, PUBLIC_A_DEFERRED_COMMERCE_CODE
from payorch.simulator.provider_a.wire import HOLD_DAYS
from payorch.simulator.registry import SIMULATED
from tests.kit import Sandbox, new_application
from tests.simulator.helpers import A_API, a_headers, create_a, decide_a

CLOCK = "/simulator/controls/clock"


def deferred_headers(runtime: Runtime, application_id: str) -> dict[str, str]:
    creds = mock_deferred_credentials(runtime.cipher, application_id)
    return {"Tbk-Api-Key-Id": creds["commerce_code"], "Tbk-Api-Key-Secret": creds["api_key"]}


async def _held(
    sim: httpx.AsyncClient, headers: dict[str, str], order: str, amount: int = 1500
) -> dict[str, object]:
    """Approved on the page and committed: the commit's answer, with its token."""
    token = await create_a(sim, headers, buy_order=order, amount=amount)
    await decide_a(sim, token, "approve")
    committed = await sim.put(f"{A_API}/{token}", headers=headers)
    assert committed.status_code == 200, committed.text
    return {**committed.json(), "token": token}


async def _capture(
    sim: httpx.AsyncClient, headers: dict[str, str], held: dict[str, object], amount: object, **fields: object
) -> httpx.Response:
    body = {
        "buy_order": held["buy_order"],
        "authorization_code": held["authorization_code"],
        "capture_amount": amount,
    }
    return await sim.put(f"{A_API}/{held['token']}/capture", json={**body, **fields}, headers=headers)


def _refused(answer: httpx.Response, status: int, words: str) -> None:
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error_message"], answer.text


async def test_a_deferred_transaction_is_held_then_captured_once_in_part(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = deferred_headers(runtime, sandbox.application_id)
    held = await _held(sim, headers, "hold-1")
    assert (held["status"], held["response_code"], held["balance"]) == ("AUTHORIZED", 0, 1500)
    # The application's own deferred code is the application's: its immediate code sees it too.
    status = await sim.get(f"{A_API}/{held['token']}", headers=a_headers(runtime, sandbox.application_id))
    assert status.json()["status"] == "AUTHORIZED"

    _refused(await _capture(sim, headers, held, 1501), 422, "exceeds the authorized amount")
    _refused(await _capture(sim, headers, held, 1000, buy_order="other"), 422, "buy_order")
    _refused(await _capture(sim, headers, held, 1000, authorization_code="000000"), 422, "authorization_code")
    _refused(await _capture(sim, headers, held, 1000, extra=1), 400, "unexpected field 'extra'")
    assert (await sim.get(f"{A_API}/{held['token']}", headers=headers)).json()["status"] == "AUTHORIZED"

    captured = await _capture(sim, headers, held, "1000")  # the SDK sends it as a string
    assert captured.status_code == 200, captured.text
    body = captured.json()
    assert body["token"] == held["token"] and body["authorization_code"] == held["authorization_code"]
    assert (body["captured_amount"], body["response_code"]) == (1000, 0)
    assert body["authorization_date"].startswith(runtime.clock.now().strftime("%Y-%m-%dT%H:%M"))
    after = (await sim.get(f"{A_API}/{held['token']}", headers=headers)).json()
    assert (after["status"], after["amount"], after["balance"]) == ("CAPTURED", 1500, 1000)
    _refused(await _capture(sim, headers, held, 500), 422, "already captured")

    _refused(
        await sim.post(f"{A_API}/{held['token']}/refunds", json={"amount": 1001}, headers=headers),
        422,
        "(311)",
    )
    refund = await sim.post(f"{A_API}/{held['token']}/refunds", json={"amount": 400}, headers=headers)
    assert (refund.json()["type"], refund.json()["balance"]) == ("NULLIFIED", 600)


async def test_an_immediate_code_captures_at_once_and_refuses_capture(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    paid = await _held(sim, headers, "now-1")
    _refused(await _capture(sim, headers, paid, 1500), 422, "not configured for deferred capture")
    deferred = deferred_headers(runtime, sandbox.application_id)
    pending = await create_a(sim, deferred, buy_order="hold-2")
    await decide_a(sim, pending, "approve")
    read = (await sim.get(f"{A_API}/{pending}", headers=deferred)).json()
    assert read["status"] == "AUTHORIZED"  # the page's choice is the authorization; no commit yet
    _refused(await _capture(sim, deferred, {**read, "token": pending}, 1500), 422, "it was not committed")
    _refused(await _capture(sim, deferred, {**read, "token": "0" * 64}, 1500), 404, "not found")


async def test_a_hold_is_released_whole_by_a_full_refund_never_in_part(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = deferred_headers(runtime, sandbox.application_id)
    held = await _held(sim, headers, "hold-3")
    _refused(
        await sim.post(f"{A_API}/{held['token']}/refunds", json={"amount": 500}, headers=headers),
        422,
        "(16)",
    )
    released = await sim.post(f"{A_API}/{held['token']}/refunds", json={"amount": 1500}, headers=headers)
    assert released.json() == {"type": "REVERSED"}
    _refused(await _capture(sim, headers, held, 1500), 422, "its status is REVERSED")


async def test_the_clock_control_lets_a_hold_lapse_and_capture_is_refused(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = deferred_headers(runtime, sandbox.application_id)
    held = await _held(sim, headers, "hold-4")
    captured = await _held(sim, headers, "hold-5")
    assert (await _capture(sim, headers, captured, 1500)).status_code == 200
    other = await new_application(runtime)
    theirs = await _held(sim, deferred_headers(runtime, other.application_id), "hold-6")

    early = await sim.post(CLOCK, json={"advance_seconds": HOLD_DAYS * 86400 - 60}, headers=sandbox.headers)
    assert {"provider": "provider_a_redirect_post", "references": []} in early.json()["lapsed"]
    assert (await sim.get(f"{A_API}/{held['token']}", headers=headers)).json()["status"] == "AUTHORIZED"
    late = await sim.post(
        CLOCK, json={"advance_seconds": 60, "provider": "provider_a"}, headers=sandbox.headers
    )
    assert late.status_code == 200, late.text
    assert late.json()["lapsed"] == [{"provider": "provider_a_redirect_post", "references": [held["token"]]}]
    status = (await sim.get(f"{A_API}/{held['token']}", headers=headers)).json()
    assert (status["status"], status["balance"]) == ("REVERSED", 0)
    _refused(await _capture(sim, headers, held, 1500), 422, "The authorization has expired")
    assert (await sim.get(f"{A_API}/{captured['token']}", headers=headers)).json()["status"] == "CAPTURED"
    other_headers = deferred_headers(runtime, other.application_id)
    assert (await sim.get(f"{A_API}/{theirs['token']}", headers=other_headers)).json()[
        "status"
    ] == "AUTHORIZED"


async def test_a_hold_lapses_with_time_too(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    headers = deferred_headers(runtime, sandbox.application_id)
    held = await _held(sim, headers, "hold-7")
    clock.advance(timedelta(days=HOLD_DAYS).total_seconds() - 1)
    assert (await sim.get(f"{A_API}/{held['token']}", headers=headers)).json()["status"] == "AUTHORIZED"
    clock.advance(1)
    assert (await sim.get(f"{A_API}/{held['token']}", headers=headers)).json()["status"] == "REVERSED"
    _refused(await _capture(sim, headers, held, 1), 422, "The authorization has expired")


async def test_the_published_deferred_code_holds_for_the_public_owner(
    sim: httpx.AsyncClient,
) -> None:
    headers = {"Tbk-Api-Key-Id": PUBLIC_A_DEFERRED_COMMERCE_CODE, "Tbk-Api-Key-Secret": PUBLIC_A_API_KEY}
    held = await _held(sim, headers, "hold-public")
    assert (await _capture(sim, headers, held, 700)).json()["captured_amount"] == 700


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"advance_seconds": 0}, 400),
        ({"advance_seconds": 60.5}, 400),
        ({"advance_seconds": 60, "provider": "provider_b"}, 400),
        ({"advance_seconds": 60, "seconds": 1}, 400),
    ],
)
async def test_the_clock_control_refuses_bad_input_and_a_provider_that_cannot_hold(
    sim: httpx.AsyncClient, sandbox: Sandbox, body: dict[str, object], status: int
) -> None:
    answer = await sim.post(CLOCK, json=body, headers=sandbox.headers)
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["code"] == "VALIDATION_ERROR"
    if body.get("provider") == "provider_b":
        [problem] = answer.json()["error"]["details"]["errors"]
        assert problem["field"] == "provider" and "a provider that can hold" in problem["message"]


async def test_the_document_offers_the_clock_control_only_the_providers_that_hold(
    sim: httpx.AsyncClient,
) -> None:
    document = (await sim.get("/openapi.json")).json()
    schema = document["components"]["schemas"]["ClockRequest"]["properties"]["provider"]
    [named] = [option["enum"] for option in schema["anyOf"] if "enum" in option]
    assert set(named) == {name for s in SIMULATED if s.holds is not None for name in (s.provider_id, s.name)}
    assert not {"provider_b", "provider_b_redirect_get"} & set(named)


async def test_the_clock_control_takes_a_whole_number_with_a_zero_fraction(
    sim: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    answer = await sim.post(CLOCK, json={"advance_seconds": 60.0}, headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["advanced_seconds"] == 60 and isinstance(answer.json()["advanced_seconds"], int)


async def test_the_clock_control_is_for_sandbox_applications_only(
    sim: httpx.AsyncClient, runtime: Runtime
) -> None:
    live = await new_application(runtime, "PRODUCTION")
    answer = await sim.post(CLOCK, json={"advance_seconds": 60}, headers=live.headers)
    assert answer.status_code == 403
    assert (await sim.post(CLOCK, json={"advance_seconds": 60})).status_code == 401
