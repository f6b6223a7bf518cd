"""Provider D's manual capture (``additionalData.manualCapture``): ``/captures`` (all or part, the
rest cancelled) and ``/cancels`` answer ``201 received``; the hold is read from their words
(CAPTURE, CANCELLATION; EXPIRE when the authorisation lapses)."""

from __future__ import annotations

from payorch.jsontypes import JsonObject
from payorch.providers.base import ConnectorContext, ProviderRejected
from payorch.providers.holds import HoldRef, HoldState, HoldStatus, made_already
from payorch.providers.provider_d import wire
from payorch.providers.provider_d.adapter import PSP_REFERENCES, ProviderDCredentials, post
from payorch.providers.words import ProviderWord, WordQuery, latest

_ENDS = {wire.CANCELLATION: HoldStatus.RELEASED, wire.CANCEL_OR_REFUND: HoldStatus.RELEASED}
_ENDS[wire.EXPIRE] = HoldStatus.LAPSED


class ProviderDHolds:
    async def capture(self, ctx: ConnectorContext, hold: HoldRef, amount: int, key: str) -> HoldState:
        body: JsonObject = {"amount": {"value": amount, "currency": hold.currency}}
        return await self._modify(ctx, hold, "capture", "/captures", body, key, amount)

    async def void(self, ctx: ConnectorContext, hold: HoldRef, key: str) -> HoldState:
        return await self._modify(ctx, hold, "void", "/cancels", {}, key, None)

    async def read_hold(self, ctx: ConnectorContext, hold: HoldRef) -> HoldState:
        events = frozenset(_ENDS) | {wire.CAPTURE}
        words = await ctx.words.find(WordQuery(events, original_reference=hold.provider_reference))
        words += await ctx.words.find(WordQuery(frozenset({wire.EXPIRE}), reference=hold.provider_reference))
        for word in sorted(words, key=lambda w: (w.success, w.event_at is not None), reverse=True):
            if word.success:
                return _state(hold, word)
        # Nothing done yet, or what was asked refused. A capture or cancel whose word is still
        # to come is safe to ask again: under its Idempotency-Key it is the same one.
        return HoldState(HoldStatus.HELD, details={"words": [w.event for w in words]})

    async def _modify(
        self, ctx: ConnectorContext, hold: HoldRef, operation: str, action: str, body: JsonObject, key: str,
        capture: int | None,
    ) -> HoldState:
        body = {**body, "merchantAccount": ProviderDCredentials.of(ctx).merchant_account}
        body["reference"] = key[:80]
        path = f"{wire.PAYMENTS}/{PSP_REFERENCES.path(hold.provider_reference)}{action}"
        try:
            made = await post(ctx, operation, path, wire.Modification, body, key)
        except ProviderRejected:
            if seen := await made_already(self, ctx, hold, capture):
                return seen
            raise
        event = wire.CAPTURE if capture is not None else wire.CANCELLATION
        said = await latest(ctx.words, event, made.psp_reference)
        if said is None:
            return HoldState(HoldStatus.PENDING, details={"psp_reference": made.psp_reference})
        if not said.success:
            reason = said.reason or "no reason given"
            raise ProviderRejected(f"{operation} refused: {reason}", provider=ctx.provider)
        return _state(hold, said)


def _state(hold: HoldRef, word: ProviderWord) -> HoldState:
    details = {"event": word.event, "psp_reference": word.reference}
    if word.event == wire.CAPTURE:
        captured = word.amount if word.amount is not None else hold.amount
        return HoldState(HoldStatus.CAPTURED, captured, hold.amount - captured, details)
    return HoldState(_ENDS[word.event], amount_released=hold.amount, details=details)
