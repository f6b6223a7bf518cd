"""Fixtures of the payments tests: authorized payments written through the repositories (as a
checkout return would), and a fake provider behind the refund seam."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from payorch.ids import new_id
from payorch.intents import repository as intents
from payorch.intents.records import PaymentIntent
from payorch.payments import repository as payments
from payorch.payments.records import Payment
from payorch.providers.provider_a import PROVIDER_A
from payorch.runtime import Runtime
from tests.conftest import Sandbox
from tests.payments.fakes import FakeGateway


@dataclass
class Paid:
    payment_id: str
    intent_id: str
    amount: int


async def authorized_payment(
    runtime: Runtime,
    app: Sandbox,
    *,
    amount: int = 1000,
    currency: str = "CLP",
    provider: str = PROVIDER_A,
    at_ms: int | None = None,
    status: str = "AUTHORIZED",
    external_reference: str | None = None,
) -> Paid:
    """An intent AUTHORIZED with its payment, in one transaction, like the return handler."""
    now = runtime.clock.now()
    at_ms = at_ms if at_ms is not None else int(time.time() * 1000)
    intent_id = new_id("payi", at_ms)
    payment_id = new_id("pay", at_ms)
    reference = external_reference if external_reference is not None else f"order-{intent_id[-6:]}"
    async with runtime.database.transaction() as conn:
        await intents.insert_intent(
            conn,
            PaymentIntent(
                id=intent_id,
                application_id=app.application_id,
                merchant_account_id=app.merchant_account_id,
                status=status,
                external_reference=reference,
                amount=amount,
                currency=currency,
                description=None,
                requested_provider="auto",
                provider=provider,
                return_url="https://shop.example/return",
                metadata={},
                created_at=now,
                updated_at=now,
            ),
        )
        await payments.insert_payment(
            conn,
            Payment(
                id=payment_id,
                application_id=app.application_id,
                payment_intent_id=intent_id,
                merchant_account_id=app.merchant_account_id,
                external_reference=reference,
                status=status,
                amount=amount,
                refunded_amount=0,
                currency=currency,
                provider=provider,
                provider_reference="tok-" + intent_id[-10:],
                authorization_code="1213",
                authorized_at=now,
                created_at=now,
            ),
        )
    return Paid(payment_id, intent_id, amount)


@pytest.fixture
def gateway() -> FakeGateway:
    return FakeGateway()


@pytest.fixture
def refund_gateway(request: pytest.FixtureRequest) -> FakeGateway | None:
    """The runtime is built with the fake for the tests that ask for ``gateway``; the others
    refund through the provider adapters."""
    if "gateway" in request.fixturenames:
        fake: FakeGateway = request.getfixturevalue("gateway")
        return fake
    return None
