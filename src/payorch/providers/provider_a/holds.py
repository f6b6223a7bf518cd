"""Provider A's deferred capture (docs/providers.md, "Holding and capturing"): capture with
``PUT .../transactions/{token}/capture``, void with a refund of the whole hold (a reversal), and
the hold read from the transaction's status (AUTHORIZED: held; CAPTURED: ``balance`` is what was
captured, as nothing can be refunded before payorch records the capture; REVERSED: released,
or lapsed once its window has passed: the provider reads the same for both).

Its capture takes no idempotency key and works once: a capture whose answer was lost is read
back (CAPTURED), never sent again blindly; a second capture answers 422, read back too.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from payorch.providers.base import ConnectorContext, ProviderRejected
from payorch.providers.holds import HoldRef, HoldState, HoldStatus, made_already
from payorch.providers.http import parse, send
from payorch.providers.provider_a import PROVIDER_A, wire
from payorch.providers.provider_a.adapter import buy_order_for, headers_for
from payorch.providers.provider_a.refusals import rejected

RELEASED_STATES = (wire.REVERSED, wire.NULLIFIED)


class ProviderAHolds:
    async def capture(self, ctx: ConnectorContext, hold: HoldRef, amount: int, key: str) -> HoldState:
        path = f"{wire.TRANSACTIONS}/{hold.provider_reference}{wire.CAPTURE_PATH}"
        body = wire.CaptureTransaction(
            buy_order=buy_order_for(hold.payment_intent_id),
            authorization_code=hold.authorization_code or "",
            capture_amount=amount,
        )
        response = await send(ctx, "capture", "PUT", path, headers=headers_for(ctx), json=body.model_dump())
        if response.status_code == 200:
            captured = parse(wire.CapturedTransaction, response, "capture", PROVIDER_A)
            if captured.response_code not in (None, 0):
                raise ProviderRejected(
                    f"capture refused (response_code {captured.response_code})",
                    provider=PROVIDER_A,
                    code=str(captured.response_code),
                )
            return _captured(hold, captured.captured_amount)
        refused = rejected("capture", response)
        # A 422: captured already (a retry whose first answer was lost), released or lapsed.
        if response.status_code == 422 and (seen := await made_already(self, ctx, hold, amount)):
            return seen
        raise refused

    async def void(self, ctx: ConnectorContext, hold: HoldRef, key: str) -> HoldState:
        path = f"{wire.TRANSACTIONS}/{hold.provider_reference}/refunds"
        body = wire.RefundTransaction(amount=hold.amount)
        response = await send(ctx, "void", "POST", path, headers=headers_for(ctx), json=body.model_dump())
        if response.status_code == 200:
            answer = parse(wire.ProviderARefundAnswer, response, "void", PROVIDER_A)
            if answer.type == wire.REVERSED:
                return HoldState(HoldStatus.RELEASED, details={"type": answer.type})
        if seen := await made_already(self, ctx, hold, None):  # released already (a lost answer)
            return seen
        raise (
            rejected("void", response)
            if response.status_code != 200
            else ProviderRejected("void: the provider did not release the hold", provider=PROVIDER_A)
        )

    async def read_hold(self, ctx: ConnectorContext, hold: HoldRef) -> HoldState:
        path = f"{wire.TRANSACTIONS}/{hold.provider_reference}"
        response = await send(ctx, "status", "GET", path, headers=headers_for(ctx))
        if response.status_code != 200:
            if _past_both_windows(ctx, hold, response):
                # The status read answers for 7 days from create, the hold for 7 days from the
                # approval: past both, nothing of it can be captured any more (capture answers
                # the expiry) and the provider no longer answers about it: lapsed.
                return HoldState(HoldStatus.LAPSED, details={"status": "past the status read's 7 days"})
            raise rejected("status", response)
        status = parse(wire.TransactionStatus, response, "status", PROVIDER_A)
        details = {"status": status.status, "balance": status.balance}
        if status.status == wire.AUTHORIZED:
            return HoldState(HoldStatus.HELD, details=details)
        if status.status in (wire.CAPTURED, wire.PARTIALLY_NULLIFIED):
            return _captured(hold, status.balance or 0, details)
        if status.status in RELEASED_STATES:
            lapsed = hold.capture_before is not None and ctx.clock.now() >= hold.capture_before
            return HoldState(HoldStatus.LAPSED if lapsed else HoldStatus.RELEASED, details=details)
        raise ProviderRejected(f"the hold reads {status.status}", provider=PROVIDER_A)


def _past_both_windows(ctx: ConnectorContext, hold: HoldRef, response: httpx.Response) -> bool:
    past_hold = hold.capture_before is not None and ctx.clock.now() >= hold.capture_before
    return past_hold and response.status_code == 422 and wire.STATUS_WINDOW_CLOSED in response.text


def _captured(hold: HoldRef, amount: int, details: Mapping[str, object] | None = None) -> HoldState:
    # One capture: the rest of the hold is released with it.
    return HoldState(HoldStatus.CAPTURED, amount, hold.amount - amount, dict(details or {}))
