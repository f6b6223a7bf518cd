"""Paying an order through payorch: create the intent, request the checkout, send the buyer."""

from __future__ import annotations

from payorch.client import AsyncPayorchClient, CheckoutAction

from .catalog import PRODUCTS
from .config import ShopConfig
from .store import Order, Store


async def start_checkout(
    client: AsyncPayorchClient, config: ShopConfig, store: Store, order: Order
) -> CheckoutAction:
    """The checkout to send the buyer to. Safe to call again for the same order (a retry after
    an error, a second click): the idempotency keys derive from the order, so payorch answers
    with the intent and checkout it already made instead of making new ones."""
    product = PRODUCTS[order.product_id]
    intent = await client.create_payment_intent(
        merchant_account_id=config.merchant_id,
        external_reference=order.id,
        amount=order.amount,
        currency=order.currency,
        description=product.name,
        provider=order.provider,
        return_url=config.return_url(order.id),
        metadata={"order_id": order.id},
        idempotency_key=f"{order.id}-intent",
    )
    if order.payment_intent_id is None:
        await store.attach_intent(order.id, intent.id)
    checkout = await client.create_checkout(intent.id, idempotency_key=f"{order.id}-checkout")
    return checkout.checkout


async def refresh_from_intent(client: AsyncPayorchClient, store: Store, order: Order) -> str:
    """Read the intent (the truth, unlike the return URL's query string) and update the order;
    answers the intent's status."""
    assert order.payment_intent_id is not None
    intent = await client.get_payment_intent(order.payment_intent_id)
    await store.apply_intent_status(intent.id, intent.status)
    return intent.status
