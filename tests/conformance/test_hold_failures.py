"""Conformance: the failure paths of capture and void, for every provider that declares holds
(SQLite and PostgreSQL): the provider answering 5xx or timing out (nothing applied), its answer
lost after it applied the call, and a crash between its answer and payorch's commit. payorch
answers 502 with the outcome unknown and keeps the action in flight (a second one is refused);
the settle-holds job then reads the provider and makes payorch agree with it: still held (the
merchant may try again), or captured / voided with its event once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from payorch.payments import holds
from payorch.payments.hold_job import SettleHoldActions
from payorch.simulator.conformance import Money
from tests.conformance.holds import books, capture, held, payment, void
from tests.conformance.kit import Checkout, Shop
from tests.kit import assert_error

pytestmark = pytest.mark.slow  # timeouts sit out the provider timeout
Move = Callable[[Shop, str], Awaitable[httpx.Response]]
# Each move, what the provider's books then show, and the payment's status.
MOVES: dict[str, tuple[Move, Callable[[Shop], Money], str]] = {
    "capture": (
        lambda shop, pid: capture(shop, pid, shop.amount - shop.part),
        lambda shop: Money(held=0, taken=shop.amount - shop.part),
        "AUTHORIZED",
    ),
    "void": (lambda shop, pid: void(shop, pid), lambda shop: Money(held=0, taken=0), "VOIDED"),
}


@pytest.fixture(autouse=True)
def needs_holds(shop: Shop) -> None:
    if shop.provider.holds is None:
        pytest.skip(f"{shop.id} declares no holds")


async def _settle(shop: Shop) -> None:
    shop.clock.advance(120)  # past the action's check time
    while await SettleHoldActions().run_once(shop.runtime):
        pass


def _unknown(answer: httpx.Response) -> None:
    assert assert_error(answer, 502, "PROVIDER_ERROR")["details"]["outcome"] == "unknown"


async def _held_or_told(shop: Shop, payment_id: str, move: str) -> None:
    """Between the provider applying the move and the job: still held at payorch, or already
    what the provider says, where it sent a notification (C's charge.captured,
    payment_intent.canceled), which payorch reads as a hint: it read the hold and settled it.
    Either way ``_ended`` then sees one event, not two."""
    status = (await payment(shop, payment_id))["status"]
    assert status in ("REQUIRES_CAPTURE", MOVES[move][2]), status


async def _ended(shop: Shop, checkout: Checkout, payment_id: str, move: str) -> None:
    _, money, status = MOVES[move]
    assert (await payment(shop, payment_id))["status"] == status
    assert await books(shop, checkout) == money(shop)
    event = "payment.captured" if move == "capture" else "payment.voided"
    assert (await shop.event_types(checkout.intent_id)).count(event) == 1


@pytest.mark.parametrize("move", list(MOVES))
@pytest.mark.parametrize("fault", ["error", "timeout"])
async def test_a_provider_down_applies_nothing_and_the_job_frees_the_hold(
    shop: Shop, fault: str, move: str
) -> None:
    checkout, payment_id = await held(shop)
    send = MOVES[move][0]
    await shop.set_fault(fault)
    try:
        _unknown(await send(shop, payment_id))
        assert_error(await send(shop, payment_id), 409, "INVALID_STATE")  # in flight: one at a time
    finally:
        await shop.set_fault("ok")
    await _settle(shop)
    shown = await payment(shop, payment_id)
    assert (shown["status"], shown["amount_capturable"]) == ("REQUIRES_CAPTURE", shop.amount), shown
    assert await books(shop, checkout) == Money(held=shop.amount, taken=0)
    again = await send(shop, payment_id)  # the hold is free again
    assert again.status_code == 200, again.text
    await _ended(shop, checkout, payment_id, move)


@pytest.mark.loses_an_answer
@pytest.mark.parametrize("move", list(MOVES))
async def test_an_answer_lost_after_the_provider_applied_it(shop: Shop, move: str) -> None:
    checkout, payment_id = await held(shop)
    # A capture is a PUT at provider A, a POST at C; a void a POST at both.
    shop.network.lose_next_answer(f"/simulator/{shop.provider.simulator_name}/", ("POST", "PUT"))
    _unknown(await MOVES[move][0](shop, payment_id))
    assert shop.network.lost == 1, "the call must have reached the provider"
    await _held_or_told(shop, payment_id, move)
    await _settle(shop)
    await _ended(shop, checkout, payment_id, move)


@pytest.mark.parametrize("move", list(MOVES))
async def test_a_crash_between_the_providers_answer_and_the_commit(
    shop: Shop, move: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout, payment_id = await held(shop)
    real = holds.settle
    crashes = [RuntimeError("the process died before its commit")]

    async def crashing(*args: Any, **kwargs: Any) -> Any:
        if crashes:
            raise crashes.pop()
        return await real(*args, **kwargs)

    monkeypatch.setattr(holds, "settle", crashing)
    # The provider's notifications wait: a notice read as a hint settles through the same
    # holds.settle, and the crash is the move's own, between the provider's answer and its commit.
    shop.network.hold_notifications()
    try:
        answer = await MOVES[move][0](shop, payment_id)
    except RuntimeError:  # the in-process server lets the error through after answering 500
        pass
    else:
        assert_error(answer, 500, "INTERNAL_ERROR")
    assert not crashes, "the provider's answer must have come back before the crash"
    assert (await payment(shop, payment_id))["status"] == "REQUIRES_CAPTURE"
    await _settle(shop)
    for late in shop.network.release():  # the notices arrive after the job: nothing moves twice
        assert (await shop.deliver(late)).status_code == 200
    await _ended(shop, checkout, payment_id, move)
