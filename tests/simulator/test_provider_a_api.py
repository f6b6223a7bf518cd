"""Simulated provider A's API through HTTP: validation, auth, commit once, status, refunds."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from payorch.simulator.provider_a.credentials import PUBLIC_A_API_KEY, PUBLIC_A_COMMERCE_CODE
from payorch.simulator.provider_a.wire import COMMIT_WINDOW_SECONDS
from tests.kit import Sandbox, new_application
from tests.simulator.helpers import A_API, RETURN_A, a_headers, create_a, decide_a

GOOD = {
    "buy_order": "order-1",
    "session_id": "s",
    "amount": 1500,
    "return_url": RETURN_A + "payi_x",
}


async def test_create_answers_token_and_page_url_with_or_without_trailing_slash(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    for path in (A_API, A_API + "/"):
        answer = await sim.post(path, json=GOOD, headers=headers)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert set(body) == {"token", "url"}
        assert len(body["token"]) == 64
        assert body["url"] == "http://testserver/simulator/provider_a/webpayserver/initTransaction"


async def test_amount_may_be_a_numeric_string_as_the_sdk_sends_it(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers, amount="2500")
    await decide_a(sim, token, "approve")
    assert (await sim.get(f"{A_API}/{token}", headers=headers)).json()["amount"] == 2500


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        ({"buy_order": "x" * 27}, 422, "Invalid value for parameter: buy_order"),
        ({"buy_order": "order#1"}, 422, "Invalid value for parameter: buy_order"),
        ({"buy_order": ""}, 422, "buy_order is required!"),
        ({"session_id": "s" * 62}, 422, "Invalid value for parameter: session_id"),
        (
            {"return_url": "https://shop.example/" + "r" * 236},
            422,
            "Invalid value for parameter: return_url",
        ),
        ({"return_url": "ftp://shop.example/"}, 422, "Invalid value for parameter: return_url"),
        ({"amount": 10**17}, 422, "Invalid value for parameter: amount"),
        ({"amount": "12.5"}, 422, "Invalid value for parameter: amount"),
        ({"amount": 0}, 422, "Invalid value for parameter: amount"),
        ({"amount": True}, 422, "Invalid value for parameter: amount"),
        ({"amount": None}, 422, "amount is required!"),
        ({"color": "red"}, 400, "Invalid json format: unexpected field 'color'"),
    ],
)
async def test_create_validation_answers_the_provider_error_body(
    sim: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    change: dict[str, object],
    status: int,
    message: str,
) -> None:
    answer = await sim.post(
        A_API, json={**GOOD, **change}, headers=a_headers(runtime, sandbox.application_id)
    )
    assert answer.status_code == status
    assert answer.json() == {"error_message": message}


async def test_limits_are_inclusive(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    body = {
        "buy_order": "A|_=&%.,~:/?[+!@()>-z" + "12345",
        "session_id": "s" * 61,
        "amount": 10**17 - 1,
        "return_url": "https://shop.example/" + "r" * 234,
    }
    assert len(body["buy_order"]) == 26 and len(body["return_url"]) == 255
    answer = await sim.post(A_API, json=body, headers=a_headers(runtime, sandbox.application_id))
    assert answer.status_code == 200, answer.text


async def test_malformed_json_is_400(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = {**a_headers(runtime, sandbox.application_id), "Content-Type": "application/json"}
    answer = await sim.post(A_API, content=b"{not json", headers=headers)
    assert answer.status_code == 400 and answer.json() == {"error_message": "Invalid json format"}
    answer = await sim.post(A_API, content=b"[1]", headers=headers)
    assert answer.status_code == 400


async def test_bad_or_missing_key_is_401(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    for bad in (
        {},
        {**headers, "Tbk-Api-Key-Secret": "0" * 64},
        {
            "Tbk-Api-Key-Id": PUBLIC_A_COMMERCE_CODE,
            "Tbk-Api-Key-Secret": headers["Tbk-Api-Key-Secret"],
        },
    ):
        answer = await sim.post(A_API, json=GOOD, headers=bad)
        assert answer.status_code == 401 and answer.json() == {"error_message": "Not Authorized"}


async def test_public_integration_keys_work(sim: httpx.AsyncClient) -> None:
    public = {"Tbk-Api-Key-Id": PUBLIC_A_COMMERCE_CODE, "Tbk-Api-Key-Secret": PUBLIC_A_API_KEY}
    assert (await sim.post(A_API, json=GOOD, headers=public)).status_code == 200


async def test_unknown_or_foreign_token_is_404(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    token = await create_a(sim, a_headers(runtime, sandbox.application_id))
    await decide_a(sim, token, "approve")
    other = a_headers(runtime, (await new_application(runtime)).application_id)
    for unknown in (token, "f" * 64):
        for call in (
            sim.put(f"{A_API}/{unknown}", headers=other),
            sim.get(f"{A_API}/{unknown}", headers=other),
            sim.post(f"{A_API}/{unknown}/refunds", json={"amount": 1}, headers=other),
        ):
            answer = await call
            assert answer.status_code == 404 and answer.json() == {"error_message": "Transaction not found"}


async def test_commit_once_after_approval(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    early = await sim.put(f"{A_API}/{token}", headers=headers)
    assert early.status_code == 422
    assert early.json() == {"error_message": "Invalid status 0 for transaction while authorizing"}
    assert (await sim.get(f"{A_API}/{token}", headers=headers)).json()["status"] == "INITIALIZED"

    await decide_a(sim, token, "approve")
    committed = await sim.put(f"{A_API}/{token}", headers=headers)
    assert committed.status_code == 200
    body = committed.json()
    assert body["status"] == "AUTHORIZED" and body["response_code"] == 0
    assert body["amount"] == 1500 and body["buy_order"] == "order-1" and body["session_id"] == "session-1"
    assert body["card_detail"] == {"card_number": "6623"} and body["payment_type_code"] == "VN"
    assert len(body["authorization_code"]) == 6 and len(body["accounting_date"]) == 4
    assert body["transaction_date"].endswith("Z") and body["balance"] == 1500
    second = await sim.put(f"{A_API}/{token}", headers=headers)
    assert second.status_code == 422
    assert second.json() == {"error_message": "Transaction has an invalid finished state: committed"}
    assert (await sim.get(f"{A_API}/{token}", headers=headers)).json() == body


async def test_rejected_commit_says_failed(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    await decide_a(sim, token, "reject")
    body = (await sim.put(f"{A_API}/{token}", headers=headers)).json()
    assert body["status"] == "FAILED" and body["response_code"] == -1
    assert body["card_detail"] == {"card_number": "0568"} and body["balance"] is None


@pytest.mark.parametrize("outcome", ["cancel", "timeout", "error"])
async def test_commit_after_an_abort_is_422(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, outcome: str
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    await decide_a(sim, token, outcome)
    answer = await sim.put(f"{A_API}/{token}", headers=headers)
    assert answer.status_code == 422
    assert answer.json() == {"error_message": "Transaction has an invalid finished state: aborted"}
    status = (await sim.get(f"{A_API}/{token}", headers=headers)).json()
    assert status["status"] == "FAILED" and status["response_code"] == -1


async def test_late_commit_is_422_and_the_uncommitted_approval_is_reversed(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    """Commit is accepted for COMMIT_WINDOW_SECONDS after the buyer's choice (even past the
    token's 5 minutes); after it the approval is reversed: it reads FAILED, and cannot be
    committed or refunded."""
    headers = a_headers(runtime, sandbox.application_id)
    in_time, late = await create_a(sim, headers), await create_a(sim, headers)
    await decide_a(sim, in_time, "approve")
    await decide_a(sim, late, "approve")
    clock.advance(COMMIT_WINDOW_SECONDS)
    assert (await sim.put(f"{A_API}/{in_time}", headers=headers)).status_code == 200
    assert (await sim.get(f"{A_API}/{late}", headers=headers)).json()["status"] == "AUTHORIZED"
    clock.advance(1)
    answer = await sim.put(f"{A_API}/{late}", headers=headers)
    assert answer.status_code == 422
    assert answer.json() == {"error_message": "Transaction has an invalid finished state: aborted"}
    status = (await sim.get(f"{A_API}/{late}", headers=headers)).json()
    assert status["status"] == "FAILED" and status["response_code"] == -1
    assert status["authorization_code"] is None
    refund = await sim.post(f"{A_API}/{late}/refunds", json={"amount": 1}, headers=headers)
    assert refund.status_code == 422 and "(16)" in refund.json()["error_message"]
    committed = (await sim.get(f"{A_API}/{in_time}", headers=headers)).json()
    assert committed["status"] == "AUTHORIZED" and committed["response_code"] == 0


async def test_commit_without_a_choice_after_the_token_lived_is_expired(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    clock.advance(301)
    answer = await sim.put(f"{A_API}/{token}", headers=headers)
    assert answer.status_code == 422
    assert answer.json() == {"error_message": "Transaction has an invalid finished state: expired"}


async def test_commit_body_must_be_empty(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    await decide_a(sim, token, "approve")
    answer = await sim.put(f"{A_API}/{token}", json={"amount": 1}, headers=headers)
    assert answer.status_code == 400
    assert (await sim.put(f"{A_API}/{token}", json={}, headers=headers)).status_code == 200


async def test_concurrent_commits_succeed_once(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    await decide_a(sim, token, "approve")
    answers = await asyncio.gather(*(sim.put(f"{A_API}/{token}", headers=headers) for _ in range(6)))
    assert sorted(a.status_code for a in answers) == [200] + [422] * 5


async def test_status_is_kept_seven_days(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    clock.advance(7 * 86400 - 1)
    assert (await sim.get(f"{A_API}/{token}", headers=headers)).status_code == 200
    clock.advance(2)
    answer = await sim.get(f"{A_API}/{token}", headers=headers)
    assert answer.status_code == 422 and "7 days" in answer.json()["error_message"]


async def _authorized(sim: httpx.AsyncClient, headers: dict[str, str], amount: int = 1500) -> str:
    token = await create_a(sim, headers, amount=amount)
    await decide_a(sim, token, "approve")
    assert (await sim.put(f"{A_API}/{token}", headers=headers)).status_code == 200
    return token


async def test_full_refund_within_three_hours_is_a_reversal(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await _authorized(sim, headers)
    clock.advance(3 * 3600 - 1)
    answer = await sim.post(f"{A_API}/{token}/refunds", json={"amount": 1500}, headers=headers)
    assert answer.status_code == 200 and answer.json() == {"type": "REVERSED"}
    status = (await sim.get(f"{A_API}/{token}", headers=headers)).json()
    assert status["status"] == "REVERSED" and status["balance"] == 0
    again = await sim.post(f"{A_API}/{token}/refunds", json={"amount": 1}, headers=headers)
    assert again.status_code == 422 and "(310)" in again.json()["error_message"]


async def test_late_full_refund_and_partial_refunds_are_nullifications(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    late = await _authorized(sim, headers)
    partial = await _authorized(sim, headers)
    clock.advance(3 * 3600 + 1)
    body = (await sim.post(f"{A_API}/{late}/refunds", json={"amount": "1500"}, headers=headers)).json()
    assert body["type"] == "NULLIFIED" and body["balance"] == 0 and body["nullified_amount"] == 1500
    assert body["response_code"] == 0 and len(body["authorization_code"]) == 6
    assert (await sim.get(f"{A_API}/{late}", headers=headers)).json()["status"] == "NULLIFIED"

    first = (await sim.post(f"{A_API}/{partial}/refunds", json={"amount": 500}, headers=headers)).json()
    assert first["type"] == "NULLIFIED" and first["balance"] == 1000
    assert (await sim.get(f"{A_API}/{partial}", headers=headers)).json()["status"] == "PARTIALLY_NULLIFIED"
    over = await sim.post(f"{A_API}/{partial}/refunds", json={"amount": 1001}, headers=headers)
    assert over.status_code == 422 and "(311)" in over.json()["error_message"]
    last = (await sim.post(f"{A_API}/{partial}/refunds", json={"amount": 1000}, headers=headers)).json()
    assert last["type"] == "NULLIFIED" and last["balance"] == 0


async def test_refund_of_a_failed_or_old_transaction_is_422(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    rejected = await create_a(sim, headers)
    await decide_a(sim, rejected, "reject")
    answer = await sim.post(f"{A_API}/{rejected}/refunds", json={"amount": 1}, headers=headers)
    assert answer.status_code == 422 and "(16)" in answer.json()["error_message"]
    old = await _authorized(sim, headers)
    clock.advance(91 * 86400)
    answer = await sim.post(f"{A_API}/{old}/refunds", json={"amount": 1}, headers=headers)
    assert answer.status_code == 422 and "(284)" in answer.json()["error_message"]
    bad = await sim.post(f"{A_API}/{old}/refunds", json={"amount": 1, "x": 1}, headers=headers)
    assert bad.status_code == 400


async def test_concurrent_refunds_never_exceed_the_amount(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await _authorized(sim, headers, amount=1000)
    answers = await asyncio.gather(
        *(sim.post(f"{A_API}/{token}/refunds", json={"amount": 300}, headers=headers) for _ in range(5))
    )
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 422, 422]
    assert (await sim.get(f"{A_API}/{token}", headers=headers)).json()["balance"] == 100


async def test_card_brands_cap_retries_of_a_declined_order(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    """Three declines of one buy_order within 24 h: the next attempt is declined even when the
    buyer presses approve; a day later, or another order, is approved."""
    headers = a_headers(runtime, sandbox.application_id)
    for _ in range(3):
        token = await create_a(sim, headers, buy_order="retried-1")
        await decide_a(sim, token, "reject")
    capped = await create_a(sim, headers, buy_order="retried-1")
    await decide_a(sim, capped, "approve")
    body = (await sim.get(f"{A_API}/{capped}", headers=headers)).json()
    assert body["status"] == "FAILED" and body["response_code"] == -1
    other = await create_a(sim, headers, buy_order="retried-2")
    await decide_a(sim, other, "approve")
    assert (await sim.get(f"{A_API}/{other}", headers=headers)).json()["status"] == "AUTHORIZED"
    clock.advance(24 * 3600 + 1)
    later = await create_a(sim, headers, buy_order="retried-1")
    await decide_a(sim, later, "approve")
    assert (await sim.get(f"{A_API}/{later}", headers=headers)).json()["status"] == "AUTHORIZED"
