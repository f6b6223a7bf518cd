"""Provider C's manual capture (docs/providers.md, "Holding and capturing"): capture with
``POST /v1/payment_intents/{id}/capture`` (``amount_to_capture``; the rest is released), void
with ``.../cancel``, the hold read from the PaymentIntent (``requires_capture``: held;
``succeeded``: captured ``amount_received``; ``canceled``: released, or lapsed when its
``cancellation_reason`` is ``automatic``). Every POST carries our Idempotency-Key, so a retried
capture never captures twice; a refusal (400) is read back before it is believed.
"""

from __future__ import annotations

import httpx

from payorch.providers.base import ConnectorContext, ProviderRejected
from payorch.providers.calls import call
from payorch.providers.holds import HoldRef, HoldState, HoldStatus, made_already
from payorch.providers.http import parse, send
from payorch.providers.provider_c import PROVIDER_C, wire
from payorch.providers.provider_c.adapter import form_headers, headers_for
from payorch.providers.provider_c.refusals import rejected


class ProviderCHolds:
    async def capture(self, ctx: ConnectorContext, hold: HoldRef, amount: int, key: str) -> HoldState:
        body = wire.form_of({"amount_to_capture": wire.wire_amount(amount, hold.currency)})
        response = await _post(ctx, "capture", hold, "/capture", body, key)
        if response.status_code == 200:
            return _state(parse(wire.HeldPaymentIntent, response, "capture", PROVIDER_C))
        refused = rejected("capture", response)
        if response.status_code == 400 and (seen := await made_already(self, ctx, hold, amount)):
            return seen
        raise refused

    async def void(self, ctx: ConnectorContext, hold: HoldRef, key: str) -> HoldState:
        body = wire.form_of({"cancellation_reason": "requested_by_customer"})
        response = await _post(ctx, "void", hold, "/cancel", body, key)
        if response.status_code == 200:
            return _state(parse(wire.HeldPaymentIntent, response, "void", PROVIDER_C))
        refused = rejected("void", response)
        if response.status_code == 400 and (seen := await made_already(self, ctx, hold, None)):
            return seen
        raise refused

    async def read_hold(self, ctx: ConnectorContext, hold: HoldRef) -> HoldState:
        path = f"{wire.PAYMENT_INTENTS}/{hold.provider_reference}"
        intent = await call(
            ctx,
            "read payment intent",
            "GET",
            path,
            wire.HeldPaymentIntent,
            headers=headers_for(ctx),
            refusals=rejected,
        )
        return _state(intent)


def _state(intent: wire.HeldPaymentIntent) -> HoldState:
    details = {"status": intent.status, "cancellation_reason": intent.cancellation_reason}
    if intent.status == wire.REQUIRES_CAPTURE:
        return HoldState(HoldStatus.HELD, details=details)
    if intent.status == wire.SUCCEEDED:
        received = intent.amount_received
        return HoldState(HoldStatus.CAPTURED, received, intent.amount - received, details)
    if intent.status == wire.CANCELED:
        lapsed = intent.cancellation_reason == wire.LAPSED_REASON
        return HoldState(HoldStatus.LAPSED if lapsed else HoldStatus.RELEASED, details=details)
    raise ProviderRejected(f"the hold reads {intent.status}", provider=PROVIDER_C)


async def _post(
    ctx: ConnectorContext, operation: str, hold: HoldRef, action: str, body: bytes, key: str
) -> httpx.Response:
    path = f"{wire.PAYMENT_INTENTS}/{hold.provider_reference}{action}"
    return await send(ctx, operation, "POST", path, headers=form_headers(ctx, key), content=body)
