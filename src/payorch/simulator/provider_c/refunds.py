"""Simulated provider C's refunds of a PaymentIntent. In the caller's transaction."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.jsontypes import JsonObject
from payorch.simulator.provider_c import repository
from payorch.simulator.provider_c.records import SimCRefund
from payorch.simulator.provider_c.wire import SimCWireError, integer, missing, new_object_id, string_map, text

REASONS = ("duplicate", "fraudulent", "requested_by_customer")


async def create(conn: AsyncConnection, clock: Clock, owner: str, body: JsonObject) -> SimCRefund:
    """Refund ``amount`` (absent: the rest) of a succeeded PaymentIntent."""
    intent_id = text(body, "payment_intent", limit=80)
    if intent_id is None:
        if body.get("charge") is not None:
            raise SimCWireError(400, "Refund by payment_intent: charges are not simulated.", param="charge")
        raise SimCWireError(
            400, "Missing required param: payment_intent.", code="parameter_missing", param="payment_intent"
        )
    intent = await repository.intent_of(conn, intent_id, owner=owner, for_update=True)
    if intent is None:
        raise missing("payment_intent", intent_id, "payment_intent")
    if intent.status != "succeeded" or intent.latest_charge is None:
        raise SimCWireError(
            400,
            f"This PaymentIntent ({intent.id}) does not have a successful charge to refund.",
            code="charge_not_refundable"
            if intent.status == "processing"
            else "payment_intent_unexpected_state",
            param="payment_intent",
        )
    rest = intent.amount_received - intent.amount_refunded
    amount = rest if body.get("amount") is None else integer(body.get("amount"), "amount", minimum=1)
    if amount > rest:
        raise SimCWireError(
            400,
            f"Refund amount ({amount}) is greater than unrefunded amount on charge ({rest})",
            code="amount_too_large",
            param="amount",
        )
    if rest == 0:
        raise SimCWireError(
            400, f"Charge {intent.latest_charge} has already been refunded.", code="charge_already_refunded"
        )
    reason = text(body, "reason", limit=40)
    if reason is not None and reason not in REASONS:
        raise SimCWireError(400, "Invalid reason.", param="reason")
    refund = SimCRefund(
        id=new_object_id("re_"),
        owner=owner,
        payment_intent_id=intent.id,
        charge=intent.latest_charge,
        amount=amount,
        currency=intent.currency,
        status="succeeded",
        reason=reason,
        metadata=dict(string_map(body.get("metadata"), "metadata")),
        created_at=clock.now(),
    )
    await repository.insert_refund(conn, refund)
    await repository.upsert_intent(
        conn, replace(intent, amount_refunded=intent.amount_refunded + amount), new=False
    )
    return refund


async def read(conn: AsyncConnection, owner: str, refund_id: str) -> SimCRefund:
    refund = await repository.refund_of(conn, owner, refund_id)
    if refund is None:
        raise missing("refund", refund_id)
    return refund
