"""The replay store of the simulated providers' APIs (payorch.simulator.replays), through HTTP with
a toy provider (tests/simulator/toy_provider.py): the same request under a key gets the first
answer again, another request under it the provider's conflict."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.simulator.toy_provider import BASE, CONFLICT, Toy, toy

__all__ = ["toy"]


async def test_the_same_request_under_a_key_gets_the_first_answer_again(toy: Toy) -> None:
    first = await toy.mark(toy.one, "m", key="k1", value="v")
    again = await toy.mark(toy.one, "m", key="k1", value="v")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() == {"name": "m", "value": "v", "call": 1}
    assert again.headers["toy-replayed"] == "true" and "toy-replayed" not in first.headers
    assert toy.ledger.calls == 1 and toy.ledger.after == ["v"]  # run and handed over once


async def test_another_request_under_a_used_key_is_the_providers_conflict(toy: Toy) -> None:
    assert (await toy.mark(toy.one, "m", key="k1", value="v")).status_code == 201
    for other in (
        await toy.mark(toy.one, "m", key="k1", value="w"),
        await toy.mark(toy.one, "n", key="k1", value="v"),
    ):
        assert (other.status_code, other.json()) == (409, CONFLICT)
    assert toy.ledger.calls == 1 and await toy.read(toy.one, "m") == "v"


async def test_a_path_only_key_replays_whatever_the_body(toy: Toy) -> None:
    async def plain(name: str, value: str) -> httpx.Response:
        headers = {"X-Toy-Key": toy.one, "Toy-Key": "k"}
        return await toy.http.post(f"{BASE}/plain/{name}", json={"value": value}, headers=headers)

    first = await plain("m", "v")
    again = await plain("m", "w")
    assert again.json() == first.json() and "toy-replayed" not in again.headers
    other = await plain("n", "v")
    assert (other.status_code, other.json()) == (409, CONFLICT)
    assert toy.ledger.calls == 1


async def test_keys_are_each_owners_own(toy: Toy) -> None:
    assert (await toy.mark(toy.one, "m", key="k1", value="one")).json()["call"] == 1
    assert (await toy.mark(toy.two, "m", key="k1", value="two")).json()["call"] == 2
    assert await toy.read(toy.two, "m") == "two"


async def test_a_refused_call_keeps_nothing_under_its_key(toy: Toy) -> None:
    refused = await toy.mark(toy.one, "m", key="k1", refuse=True)
    assert refused.status_code == 402
    retried = await toy.mark(toy.one, "m", key="k1", value="v")
    assert retried.status_code == 201 and retried.json()["call"] == 2


async def test_a_read_is_not_replayed(toy: Toy) -> None:
    headers = {"X-Toy-Key": toy.one, "Toy-Key": "k1"}
    for _ in range(2):
        assert (await toy.http.get(f"{BASE}/marks/m", headers=headers)).status_code == 200
    assert toy.ledger.calls == 2


async def test_two_requests_racing_under_a_new_key_answer_the_first_kept_answer(toy: Toy) -> None:
    """The slower one finds the key kept when it keeps its own: its call is undone and it
    answers as a retry would (here another body: the conflict)."""
    if toy.runtime.database.is_sqlite:
        pytest.skip("SQLite has one writer: two transactions cannot race to keep a key")
    headers = {"X-Toy-Key": toy.one, "Toy-Key": "k1"}
    slow = asyncio.create_task(toy.http.post(f"{BASE}/slow/m", json={"wait": True}, headers=headers))
    while toy.ledger.calls == 0:
        await asyncio.sleep(0.01)
    quick = await toy.http.post(f"{BASE}/slow/m", json={}, headers=headers)
    toy.ledger.gate.set()
    slower = await asyncio.wait_for(slow, 10)
    assert (quick.status_code, quick.json()) == (200, {"name": "m", "call": 2})
    assert (slower.status_code, slower.json()) == (409, CONFLICT)
    again = await toy.http.post(f"{BASE}/slow/m", json={}, headers=headers)
    assert again.json() == quick.json() and toy.ledger.calls == 2
