"""What a checkout's result did to its intent, told to the success rates once it committed:
authorized counts for the provider, failed (declined, or ended unpaid while in process) against
it; a buyer giving up, an expiry or nothing new counts for nothing."""

from __future__ import annotations

from payorch.intents.records import PaymentIntent
from payorch.intents.states import IntentStatus
from payorch.routing.strategy import SuccessRates

_COUNTED = {
    IntentStatus.AUTHORIZED.value: True,
    IntentStatus.REQUIRES_CAPTURE.value: True,  # approved and held: the provider said yes
    IntentStatus.FAILED.value: False,
}


async def observe(
    rates: SuccessRates, before: PaymentIntent, after: PaymentIntent, provider: str
) -> None:
    authorized = _COUNTED.get(after.status)
    if authorized is None or after.status == before.status:
        return
    await rates.payment_decided(after.merchant_account_id, after.currency, provider, authorized)
