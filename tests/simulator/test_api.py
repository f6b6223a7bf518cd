"""The endpoint wrapper every simulated provider's API runs in (payorch.simulator.api), through
HTTP with a toy provider (tests/simulator/toy_provider.py): the caller's credential, the public
write limit, fault modes, the provider's refusal rolled back, the after-commit work handed over."""

from __future__ import annotations

import time

import pytest

from tests.simulator.toy_provider import BASE, PUBLIC_KEY, REFUSALS, Toy, toy

__all__ = ["toy"]


async def test_an_unknown_credential_is_the_providers_401_and_runs_nothing(toy: Toy) -> None:
    for key in ("", "nobody"):
        answer = await toy.mark(key, "m")
        assert (answer.status_code, answer.json()) == (401, REFUSALS.unauthorized)
    assert toy.ledger.calls == 0


async def test_a_call_answers_its_body_and_its_after_commit_work_sees_the_commit(toy: Toy) -> None:
    answer = await toy.mark(toy.one, "m", value="first")
    assert (answer.status_code, answer.json()) == (201, {"name": "m", "value": "first", "call": 1})
    assert toy.ledger.after == ["first"]  # read in its own transaction: the call had committed
    assert await toy.read(toy.one, "m") == "first"
    assert await toy.read(toy.two, "m") == "ok"  # each owner's own state


async def test_a_refused_call_is_the_providers_answer_and_applies_nothing(toy: Toy) -> None:
    answer = await toy.mark(toy.one, "m", value="written", refuse=True)
    assert (answer.status_code, answer.json()) == (402, {"toy_error": "m refused"})
    assert await toy.read(toy.one, "m") == "ok"  # its write was rolled back
    assert toy.ledger.after == []  # nothing handed over


async def test_the_error_fault_is_the_providers_500_for_that_owner_only(toy: Toy) -> None:
    await toy.set_fault(toy.one, "error")
    for answer in (
        await toy.mark(toy.one, "m"),
        await toy.http.get(f"{BASE}/marks/m", headers={"X-Toy-Key": toy.one}),
    ):
        assert (answer.status_code, answer.json()) == (500, REFUSALS.failed)
    assert toy.ledger.calls == 0
    assert (await toy.mark(toy.two, "m")).status_code == 201
    await toy.set_fault(toy.one, "ok")
    assert (await toy.mark(toy.one, "m")).status_code == 201


@pytest.mark.slow  # the timeout answers a second after the adapter's timeout
@pytest.mark.settings(provider_timeout_seconds=0.1)
async def test_the_timeout_fault_answers_504_after_the_adapters_timeout(toy: Toy) -> None:
    await toy.set_fault(toy.one, "timeout")
    started = time.monotonic()
    answer = await toy.mark(toy.one, "m")
    assert (answer.status_code, answer.json()) == (504, REFUSALS.timed_out)
    assert time.monotonic() - started >= 1.1
    assert toy.ledger.calls == 0


@pytest.mark.settings(simulator_public_rate_limit="2/minute")
async def test_public_writes_are_limited_in_the_providers_429_and_reads_are_not(toy: Toy) -> None:
    assert [(await toy.mark(PUBLIC_KEY, f"p{n}")).status_code for n in range(2)] == [201, 201]
    refused = await toy.mark(PUBLIC_KEY, "p3")
    assert (refused.status_code, refused.json()) == (429, REFUSALS.too_many)
    assert int(refused.headers["retry-after"]) > 0
    assert await toy.read(PUBLIC_KEY, "p0") == "set"  # reads go on
    assert (await toy.mark(toy.one, "m")).status_code == 201  # an application's own key is not limited
