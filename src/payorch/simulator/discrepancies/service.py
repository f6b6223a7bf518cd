"""Rules of the discrepancy control: the calling sandbox application's own payments only, and
nothing of payorch's books is touched (only the simulated provider's)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.db.tables.providers import payments
from payorch.errors import ResourceNotFound, ValidationFailed
from payorch.simulator.controls.access import require_sandbox
from payorch.simulator.discrepancies.schemas import DiscrepancyMade, DiscrepancyRequest
from payorch.simulator.registry import BY_NAME
from payorch.simulator.simulated import AfterCommit, SimulatedProvider


async def _payment_reference(
    conn: AsyncConnection, caller: Caller, simulated: SimulatedProvider, intent: str
) -> str:
    """The provider's id of the payment payorch recorded for the intent at this provider."""
    reference = await conn.scalar(
        select(payments.c.provider_reference).where(
            payments.c.application_id == caller.application_id,
            payments.c.payment_intent_id == intent,
            payments.c.provider == simulated.provider_id,
        )
    )
    if reference is None:
        raise ResourceNotFound(f"No payment of this payment intent at {simulated.provider_id}.")
    return str(reference)


async def make(
    conn: AsyncConnection, clock: Clock, public_url: str, caller: Caller, request: DiscrepancyRequest
) -> tuple[DiscrepancyMade, AfterCommit | None]:
    """Make the provider disagree as ``request.kind`` says. Nothing is sent after the commit:
    payorch hears of it only by reconciling."""
    require_sandbox(caller)
    simulated, owner = BY_NAME[request.provider], caller.application_id
    made = simulated.discrepancies
    intent = request.payment_intent_id
    if request.kind == "orphan":
        if made.orphan is None:
            raise ValidationFailed(f"{simulated.provider_id} cannot show an orphan to reconciliation.")
        amount, currency = request.amount or 0, request.currency or "CLP"
        references = await made.orphan(conn, clock, public_url, owner, amount, currency)
    elif intent is None:  # refused by the request's model; kept for the type checker
        raise ValidationFailed("payment_intent_id is required.")
    elif request.kind == "approved_unreturned":
        bought = await simulated.market_buy(conn, clock, public_url, owner, intent, "approve")
        if bought is None:
            raise ResourceNotFound(f"No open checkout of this payment intent at {simulated.provider_id}.")
        references = bought.references
        await made.silence(conn, owner, references)
    else:
        reference = await _payment_reference(conn, caller, simulated, intent)
        if request.kind == "refunded_at_provider":
            references = [reference, await made.refund(conn, clock, owner, reference, request.amount)]
        else:
            await made.change_amount(conn, owner, reference, request.amount, request.currency)
            references = [reference]
    answer = DiscrepancyMade(
        provider=simulated.provider_id, kind=request.kind, payment_intent_id=intent, references=references
    )
    return answer, None
