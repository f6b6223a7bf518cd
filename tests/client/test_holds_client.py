"""The client's holds against the real app over ASGI (SQLite, PostgreSQL): a manual intent made
with ``capture_method``, paid at provider C's simulator, captured in part with
``capture_payment`` (typed Payment: captured, released), a retry with the same key answered the
same; another voided with ``void_payment``; more than is held and a second capture are the typed
errors with the server's code and details."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from payorch.app import create_app
from payorch.client import AsyncPayorchClient, InvalidStateError, Payment, UnprocessableError
from payorch.runtime import Runtime
from tests.holding import HOLDING
from tests.kit import RETURN_URL, Sandbox, mock_sandbox
from tests.providers.helpers import pay


@pytest.fixture
async def app(runtime: Runtime) -> Sandbox:
    return await mock_sandbox(runtime)


@pytest.fixture
async def shop(runtime: Runtime, app: Sandbox) -> AsyncIterator[AsyncPayorchClient]:
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    async with AsyncPayorchClient(app.api_key, "http://testserver", transport=transport) as client:
        yield client


async def held(
    shop: AsyncPayorchClient, client: httpx.AsyncClient, app: Sandbox, reference: str
) -> str:
    """A USD 1,500.00 intent held at provider C (the buyer approved on its page): its payment id."""
    intent = await shop.create_payment_intent(
        merchant_account_id=app.merchant_account_id,
        external_reference=reference,
        amount=150_000,
        currency="USD",
        return_url=RETURN_URL,
        provider=HOLDING,
        capture_method="manual",
    )
    assert intent.capture_method == "manual"
    checkout = await shop.create_checkout(intent.id)
    await pay(client, checkout.model_dump(mode="json"), "approve")
    read = await shop.get_payment_intent(intent.id)
    assert read.status == "REQUIRES_CAPTURE" and read.payment is not None, read
    assert read.payment.capture_before is not None and read.payment.amount_captured == 0
    return read.payment.id


async def test_capture_part_then_void_another(
    shop: AsyncPayorchClient, client: httpx.AsyncClient, app: Sandbox
) -> None:
    payment_id = await held(shop, client, app, "client-hold-1")
    waiting = await shop.get_payment(payment_id)
    assert (waiting.status, waiting.amount_capturable, waiting.capture_method) == (
        "REQUIRES_CAPTURE",
        150_000,
        "manual",
    )

    with pytest.raises(UnprocessableError) as over:
        await shop.capture_payment(payment_id, 150_001)
    assert (
        over.value.code == "CAPTURE_AMOUNT_EXCEEDED"
        and over.value.details["amount_capturable"] == 150_000
    )

    captured = await shop.capture_payment(payment_id, 100_000, idempotency_key="cap-1")
    assert isinstance(captured, Payment)
    assert (captured.status, captured.amount_captured, captured.amount_released) == (
        "AUTHORIZED",
        100_000,
        50_000,
    )
    assert captured.amount_capturable == 0 and captured.captured_at is not None
    again = await shop.capture_payment(payment_id, 100_000, idempotency_key="cap-1")  # a retry
    assert again == captured
    with pytest.raises(InvalidStateError) as twice:
        await shop.capture_payment(payment_id, 100)
    assert twice.value.code == "INVALID_STATE"

    other = await held(shop, client, app, "client-hold-2")
    voided = await shop.void_payment(other)
    assert (voided.status, voided.amount_released, voided.amount_captured) == ("VOIDED", 150_000, 0)
    assert (await shop.get_payment_intent(voided.payment_intent_id or "")).status == "CANCELLED"
    with pytest.raises(InvalidStateError):
        await shop.void_payment(other)
