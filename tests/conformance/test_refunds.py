"""Conformance: refunds of a payment taken at the provider's page. Partial then the rest, more
than the rest (refused), refused by the provider, and an answer lost after the provider applied
it (PENDING, then resolved by reading the provider: never refunded twice). The provider's own
books are read through its simulator's API by the driver."""

from __future__ import annotations

from typing import Any

import pytest

from payorch.payments import repository
from payorch.payments.refund_gateway import GatewayRefundOutcome, RefundOrder
from payorch.payments.refunds import refund_connector
from payorch.payments.resolve_refunds import ResolvePendingRefunds
from tests.conformance.kit import Checkout, Shop, needs_read_back
from tests.databases import own_database

database_url = own_database  # refund resolution sweeps the database: this module gets its own


async def _paid(shop: Shop) -> tuple[Checkout, str]:
    checkout = await shop.start()
    await shop.pay(checkout, "approve")
    read_back = await shop.read(checkout.intent_id)
    assert read_back["status"] == "AUTHORIZED", read_back
    return checkout, str(read_back["payment"]["id"])


async def _refund(shop: Shop, payment_id: str, body: dict[str, Any], key: str | None = None) -> Any:
    headers = {**shop.sandbox.headers, **({"Idempotency-Key": key} if key else {})}
    answered = await shop.client.post(f"/v1/payments/{payment_id}/refunds", json=body, headers=headers)
    return await shop.refund_word(answered, payment_id)


async def _refunds(shop: Shop, payment_id: str) -> list[dict[str, Any]]:
    listed = await shop.client.get(f"/v1/payments/{payment_id}/refunds", headers=shop.sandbox.headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["items"])


async def _books(shop: Shop, checkout: Checkout) -> int:
    return await shop.driver.refunded(shop.client, shop.runtime.cipher, shop.visit(checkout))


async def test_partial_then_the_rest(shop: Shop) -> None:
    checkout, payment_id = await _paid(shop)
    partial = await _refund(shop, payment_id, {"amount": shop.part}, "r-1")
    assert partial.status_code == 201, partial.text
    assert partial.json()["status"] == "SUCCEEDED" and partial.json()["amount"] == shop.part
    assert partial.json()["currency"] == shop.currency
    intent = await shop.read(checkout.intent_id)
    assert intent["status"] == "PARTIALLY_REFUNDED" and intent["payment"]["status"] == "PARTIALLY_REFUNDED"
    assert await _books(shop, checkout) == shop.part

    rest = await _refund(shop, payment_id, {}, "r-2")
    assert rest.status_code == 201, rest.text
    assert rest.json()["status"] == "SUCCEEDED" and rest.json()["amount"] == shop.amount - shop.part
    assert await shop.status(checkout.intent_id) == "REFUNDED"
    assert await _books(shop, checkout) == shop.amount
    types = await shop.event_types(checkout.intent_id)
    assert types[-4:] == ["refund.requested", "refund.succeeded"] * 2


async def test_more_than_the_rest_is_refused_and_moves_nothing(shop: Shop) -> None:
    checkout, payment_id = await _paid(shop)
    assert (await _refund(shop, payment_id, {"amount": shop.part})).status_code == 201
    before = await shop.event_types(checkout.intent_id)
    rest = shop.amount - shop.part
    over = await _refund(shop, payment_id, {"amount": rest + 1})
    assert over.status_code == 422, over.text
    error = over.json()["error"]
    assert error["code"] == "REFUND_AMOUNT_EXCEEDED"
    assert error["details"]["available_amount"] == rest
    assert [r["amount"] for r in await _refunds(shop, payment_id)] == [shop.part]
    assert await shop.event_types(checkout.intent_id) == before
    assert await _books(shop, checkout) == shop.part
    assert await shop.status(checkout.intent_id) == "PARTIALLY_REFUNDED"


async def test_refused_by_the_provider(shop: Shop) -> None:
    checkout, payment_id = await _paid(shop)
    # Someone refunds it all at the provider behind our back: our refund is then refused there.
    async with shop.runtime.database.engine.connect() as conn:
        row = await repository.get_any(conn, payment_id)
        assert row is not None
        connector = await refund_connector(conn, shop.runtime.cipher, row.merchant_account_id, shop.id)
    order = RefundOrder(
        refund_id="rfd_behind_our_back",
        amount=shop.amount,
        currency=shop.currency,
        application_id=row.application_id,
        merchant_account_id=row.merchant_account_id,
        payment_id=row.id,
        payment_intent_id=row.payment_intent_id,
        payment_amount=shop.amount,
        provider=shop.id,
        provider_reference=row.provider_reference,
        refunded_before=0,
        connector=connector,
    )
    behind = (await shop.runtime.refund_gateway.refund(order)).outcome
    await shop.runtime.detached.drain()  # its word, where it is the provider's
    received = shop.its_word and behind is GatewayRefundOutcome.UNKNOWN
    assert behind is GatewayRefundOutcome.SUCCEEDED or received, behind

    response = await _refund(shop, payment_id, {"amount": shop.part})
    if response.status_code == 202 and shop.its_word:  # received, then refused in its word
        assert response.json()["failure_reason"], response.text
    else:  # (such a provider's word may come before payorch's answer: refused alike)
        assert response.status_code == 502, response.text
        error = response.json()["error"]
        assert error["code"] == "PROVIDER_ERROR" and error["details"]["failure_reason"]
    assert [r["status"] for r in await _refunds(shop, payment_id)] == ["FAILED"]
    assert await shop.status(checkout.intent_id) == "AUTHORIZED"
    assert (await shop.event_types(checkout.intent_id))[-2:] == ["refund.requested", "refund.failed"]
    assert await _books(shop, checkout) == shop.amount  # only what was done behind our back


@pytest.mark.loses_an_answer
@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_an_answer_lost_after_the_provider_applied_it(shop: Shop) -> None:
    needs_read_back(shop, "its word on the refund resolves it at once, not the job (sent again under its key, "
                    "the provider answers with the same refund)")
    checkout, payment_id = await _paid(shop)
    shop.network.lose_next_answer(f"/simulator/{shop.provider.simulator_name}/")
    pending = await _refund(shop, payment_id, {"amount": shop.part}, "lost-1")
    assert shop.network.lost == 1, "the refund call must have reached the provider"
    assert pending.status_code == 202, pending.text
    assert pending.json()["status"] == "PENDING"
    assert await _books(shop, checkout) == shop.part  # applied there, unknown here
    assert await shop.status(checkout.intent_id) == "AUTHORIZED"
    # The reservation holds meanwhile, and a replay sends nothing.
    rest = shop.amount - shop.part
    over = await _refund(shop, payment_id, {"amount": rest + 1})
    assert over.status_code == 422 and over.json()["error"]["details"]["available_amount"] == rest
    replay = await _refund(shop, payment_id, {"amount": shop.part}, "lost-1")
    assert replay.status_code == 202 and replay.json() == pending.json()

    shop.clock.advance(60)
    job = ResolvePendingRefunds()
    while await job.run_once(shop.runtime):
        pass
    assert [r["status"] for r in await _refunds(shop, payment_id)] == ["SUCCEEDED"]
    assert await _books(shop, checkout) == shop.part  # read back, never sent twice
    assert await shop.status(checkout.intent_id) == "PARTIALLY_REFUNDED"
    types = await shop.event_types(checkout.intent_id)
    assert types.count("refund.requested") == 1 and types.count("refund.succeeded") == 1
    shop.clock.advance(3600)
    assert await job.run_once(shop.runtime) == 0
    assert await _books(shop, checkout) == shop.part
