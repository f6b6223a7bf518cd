"""Conformance: a hold nobody captured (docs/payments.md, "A hold nobody captured"), for every
provider that declares holds, on SQLite and PostgreSQL. payment.capture_due comes
PAYORCH_HOLD_CAPTURE_DUE_SECONDS before capture_before, once; at capture_before payorch asks the
provider and the intent ends EXPIRED (payment.expired, reason authorization_lapsed) unless the
provider says otherwise, which wins; a provider that cannot answer is asked again later, never
guessed; and a capture racing the lapse ends exactly one way."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from payorch.payments import holds, repository
from payorch.payments.lapse_job import DEADLINE_GRACE_SECONDS, RECHECK_SECONDS, HoldDeadlines
from payorch.payments.refunds import refund_connector
from payorch.providers.base import ProviderRejected
from payorch.providers.holds import HoldState, HoldStatus
from payorch.simulator.conformance import Money
from tests.conformance.holds import books, capture, held, payment
from tests.conformance.kit import Checkout, Shop, needs_read_back
from tests.conformance.lapse import (
    at,
    at_the_end,
    deadline,
    events_typed,
    its_lapses,
    move_provider_clock,
    passes,
)

DAY = 86400  # PAYORCH_HOLD_CAPTURE_DUE_SECONDS' default
ROUNDS = 6


@pytest.fixture(autouse=True)
def needs_holds(shop: Shop) -> None:
    if shop.provider.holds is None:
        pytest.skip(f"{shop.id} declares no holds")


async def _ended_lapsed(shop: Shop, checkout: Checkout, payment_id: str) -> None:
    assert await shop.status(checkout.intent_id) == "EXPIRED"
    shown = await payment(shop, payment_id)
    assert (shown["status"], shown["amount_capturable"], shown["amount_captured"]) == ("EXPIRED", 0, 0), shown
    expired = await events_typed(shop, checkout.intent_id, "payment.expired")
    assert [e["data"]["reason"] for e in expired] == ["authorization_lapsed"], expired
    assert (expired[0]["data"]["payment_id"], expired[0]["data"]["provider"]) == (payment_id, shop.id)
    await _nothing_taken(shop, checkout, payment_id)


async def _nothing_taken(shop: Shop, checkout: Checkout, payment_id: str) -> None:
    """The provider's books hold nothing of it; where the provider no longer answers about the
    transaction (A: its status read's 7 days are over), a capture there is refused."""
    try:
        assert await books(shop, checkout) == Money(held=0, taken=0)
    except httpx.HTTPStatusError as exc:
        assert exc.response.status_code == 422 and "max time" in exc.response.text, exc.response.text
        with pytest.raises(ProviderRejected):
            await _at_the_provider(shop, payment_id, "captured")


async def test_a_hold_nobody_captured_comes_due_then_lapses(shop: Shop) -> None:
    checkout, payment_id = await held(shop)
    capture_before = (await payment(shop, payment_id))["capture_before"]
    await at(shop, payment_id, DAY + 60)
    await passes(shop)
    assert await events_typed(shop, checkout.intent_id, "payment.capture_due") == []

    await at(shop, payment_id, DAY - 60)
    await passes(shop)
    await passes(shop)  # a second pass sends nothing more
    due = await events_typed(shop, checkout.intent_id, "payment.capture_due")
    assert len(due) == 1, due
    data = due[0]["data"]
    assert (data["payment_id"], data["provider"], data["currency"]) == (payment_id, shop.id, shop.currency)
    assert (data["amount_capturable"], data["capture_before"], data["if_uncaptured"]) == (
        shop.amount,
        capture_before,
        "lapse",
    )
    assert await shop.status(checkout.intent_id) == "REQUIRES_CAPTURE"

    # The provider's clock passes the hold's end before payorch's deadline: a provider that
    # notifies its lapse (C) has it applied at once; one that does not (A) waits for the read.
    moved = await move_provider_clock(shop, DAY)
    assert [r for lapsed in moved["lapsed"] for r in lapsed["references"]], moved
    await passes(shop)
    assert (await payment(shop, payment_id))["status"] in ("REQUIRES_CAPTURE", "EXPIRED")

    await at_the_end(shop, payment_id)
    await passes(shop)
    await _ended_lapsed(shop, checkout, payment_id)
    types = await shop.event_types(checkout.intent_id)
    assert types[-2:] == ["payment.capture_due", "payment.expired"], types
    assert types.count("payment.capture_due") == 1


@pytest.mark.parametrize("said", ["captured", "released"])
async def test_what_the_provider_says_at_the_deadline_wins(shop: Shop, said: str) -> None:
    """Captured or released at the provider outside payorch (its own dashboard, say; C's
    notification of it may be applied first): at the deadline payorch applies what it reads then, not a lapse of its own. (Provider A
    reads a released hold as it reads a lapsed one, REVERSED, so past the window payorch can only
    call it lapsed: docs/providers.md.)"""
    checkout, payment_id = await held(shop)
    await at(shop, payment_id, 60)
    await _at_the_provider(shop, payment_id, said)
    await at_the_end(shop, payment_id)
    await passes(shop)
    seen = await _at_the_provider(shop, payment_id, "read")
    if said == "captured" and seen.status is HoldStatus.LAPSED:
        # A known gap (docs/payments.md): a provider that stops answering about the transaction
        # at the hold's end (A: its status read's 7 days) is read lapsed; a capture made outside
        # payorch is then reconciliation's to find.
        pytest.skip(f"{shop.id} no longer answers about the transaction at the hold's end")
    types = await shop.event_types(checkout.intent_id)
    shown = await payment(shop, payment_id)
    if said == "captured":
        assert seen.status is HoldStatus.CAPTURED, seen
        assert (shown["status"], shown["amount_captured"]) == ("AUTHORIZED", shop.part)
        assert await shop.status(checkout.intent_id) == "AUTHORIZED"
        assert (types.count("payment.captured"), types.count("payment.expired")) == (1, 0), types
        assert await books(shop, checkout) == Money(held=0, taken=shop.part)
    elif seen.status is HoldStatus.RELEASED:
        assert shown["status"] == "VOIDED" and await shop.status(checkout.intent_id) == "CANCELLED"
        assert (types.count("payment.voided"), types.count("payment.expired")) == (1, 0), types
        await _nothing_taken(shop, checkout, payment_id)
    else:
        assert seen.status is HoldStatus.LAPSED, seen
        await _ended_lapsed(shop, checkout, payment_id)


@pytest.mark.parametrize("fault", ["error", "timeout"])
async def test_a_provider_down_at_the_deadline_is_asked_again(shop: Shop, fault: str) -> None:
    needs_read_back(shop, "payorch asks it nothing at the deadline: its EXPIRE word ends the hold")
    checkout, payment_id = await held(shop)
    await at_the_end(shop, payment_id)
    await shop.set_fault(fault)
    try:
        await passes(shop)
    finally:
        await shop.set_fault("ok")
    shown = await payment(shop, payment_id)
    assert (shown["status"], shown["amount_capturable"]) == ("REQUIRES_CAPTURE", shop.amount), shown
    assert "payment.expired" not in await shop.event_types(checkout.intent_id)
    await passes(shop)  # not asked again before RECHECK_SECONDS
    assert (await payment(shop, payment_id))["status"] == "REQUIRES_CAPTURE"
    shop.clock.advance(RECHECK_SECONDS)
    await passes(shop)
    await _ended_lapsed(shop, checkout, payment_id)


async def test_two_workers_send_each_notice_once_and_end_each_hold_once(shop: Shop) -> None:
    made = [await held(shop) for _ in range(3)]
    await at(shop, made[0][1], DAY - 60)
    for _ in range(3):
        await asyncio.gather(HoldDeadlines().run_once(shop.runtime), HoldDeadlines().run_once(shop.runtime))
    shop.clock.set(max([await deadline(shop, payment_id) for _, payment_id in made]))
    shop.clock.advance(DEADLINE_GRACE_SECONDS + 1)
    for _ in range(3):
        await asyncio.gather(HoldDeadlines().run_once(shop.runtime), HoldDeadlines().run_once(shop.runtime))
    await its_lapses(shop)
    for checkout, payment_id in made:
        types = await shop.event_types(checkout.intent_id)
        assert (types.count("payment.capture_due"), types.count("payment.expired")) == (1, 1), types
        await _ended_lapsed(shop, checkout, payment_id)


@pytest.mark.slow  # many paid rounds
async def test_capture_against_the_lapse(shop: Shop) -> None:
    """Even rounds: the capture comes a second before the deadline (the provider still holds);
    odd rounds: at the deadline (the provider has let it lapse). Each ends exactly one way."""
    for round_ in range(ROUNDS):
        checkout, payment_id = await held(shop)
        early = round_ % 2 == 0
        # The reminder first (due a day before the end): raced with the capture, it would be
        # left out whenever the capture came before the pass looked.
        await at(shop, payment_id, 60)
        await passes(shop)
        await (at(shop, payment_id, 1) if early else at_the_end(shop, payment_id))
        captured, _ = await asyncio.gather(capture(shop, payment_id, shop.part, key=f"l-{round_}"), passes(shop))
        if early:  # the provider's books, while it still answers about the transaction
            assert await books(shop, checkout) == Money(held=0, taken=shop.part)
        await at(shop, payment_id, -RECHECK_SECONDS)  # past the deadline and any lease
        await passes(shop)
        types = await shop.event_types(checkout.intent_id)
        # Early, the capture may beat the pass that would warn it is due: then none is sent.
        assert types.count("payment.capture_due") in ((0, 1) if early else (1,)), (round_, types)
        if early:
            assert captured.status_code == 200, (round_, captured.text)
            assert (types.count("payment.captured"), types.count("payment.expired")) == (1, 0), types
            assert (await payment(shop, payment_id))["amount_captured"] == shop.part
        else:
            # Such a provider receives it (202), then its word refuses it: the hold lapsed.
            assert captured.status_code in ((409, 502, 202) if shop.its_word else (409, 502)), captured.text
            assert (types.count("payment.captured"), types.count("payment.expired")) == (0, 1), types
            await _ended_lapsed(shop, checkout, payment_id)


async def _at_the_provider(shop: Shop, payment_id: str, said: str) -> HoldState:
    """Capture a part of the hold, release it, or read it, at the provider itself (payorch not told)."""
    calls = shop.provider.hold_calls
    assert calls is not None
    async with shop.runtime.phases.reading() as conn:
        stored = await repository.get_any(conn, payment_id)
        assert stored is not None
        connector = await refund_connector(conn, shop.runtime.cipher, stored.merchant_account_id, shop.id)
    assert connector is not None
    ctx, ref = holds.context_of(shop.runtime, connector), holds.hold_ref(stored)
    if said == "captured":
        state = await calls.capture(ctx, ref, shop.part, f"outside-{payment_id}")
    elif said == "released":
        state = await calls.void(ctx, ref, f"outside-{payment_id}")
    else:
        return await calls.read_hold(ctx, ref)
    await shop.runtime.detached.drain()  # in process: what the provider notifies left detached
    return state
