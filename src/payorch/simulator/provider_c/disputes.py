"""Simulated provider C's disputes (chargebacks), as the settle control moves them: ``chargeback``
opens one on the intent's paid PaymentIntent (``charge.dispute.created``), ``chargeback_won`` and
``chargeback_lost`` close the open one (``charge.dispute.closed``). The event's object is the
dispute; a reader reads it again from the API. In the caller's transaction; never commits."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.simulator.outbox.records import Notification
from payorch.simulator.provider_c import events, repository, sessions
from payorch.simulator.provider_c.records import SimCDispute, SimCPaymentIntent
from payorch.simulator.provider_c.render import dispute_body
from payorch.simulator.provider_c.wire import missing, new_object_id

OPEN = "needs_response"
# The settle control's dispute outcomes and the status each closes with (None: opens one).
OUTCOMES: dict[str, str | None] = {"chargeback": None, "chargeback_won": "won", "chargeback_lost": "lost"}


async def read(conn: AsyncConnection, owner: str, dispute_id: str) -> SimCDispute:
    dispute = await repository.dispute_of(conn, owner, dispute_id)
    if dispute is None:
        raise missing("dispute", dispute_id)
    return dispute


async def settle(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, client_reference_id: str, outcome: str
) -> tuple[SimCDispute, list[Notification]] | None:
    """Open or close a dispute on ``owner``'s paid PaymentIntent for payorch's intent; None when
    nothing is in the state the outcome starts from."""
    closes = OUTCOMES[outcome]
    now = clock.now()
    for session in await sessions.sessions_for(conn, owner, client_reference_id):
        if session.payment_intent_id is None:
            continue
        intent = await repository.intent_of(conn, session.payment_intent_id, owner=owner, for_update=True)
        if intent is None or intent.status != "succeeded" or intent.latest_charge is None:
            continue
        latest = await repository.latest_dispute(conn, owner, intent.id)
        is_open = latest is not None and latest.status == OPEN
        if closes is None and not is_open:
            # Opened later than the one before it, to the second (its ``created``), even under a
            # frozen clock: the provider's order of a payment's disputes.
            opened = now if latest is None else max(now, latest.created_at + timedelta(seconds=1))
            dispute = _new(intent, intent.latest_charge, opened)
            await repository.insert_dispute(conn, dispute)
            kind = "charge.dispute.created"
        elif closes is not None and latest is not None and is_open:
            await repository.set_dispute_status(conn, latest.id, closes)
            dispute = replace(latest, status=closes)
            kind = "charge.dispute.closed"
        else:
            continue
        sent = await events.enqueue(conn, public_url, session, kind, dispute_body(dispute), now)
        return dispute, [sent] if sent else []
    return None


def _new(intent: SimCPaymentIntent, charge: str, now: datetime) -> SimCDispute:
    return SimCDispute(
        id=new_object_id("dp_"),
        owner=intent.owner,
        payment_intent_id=intent.id,
        charge=charge,
        amount=intent.amount_received,
        currency=intent.currency,
        status=OPEN,
        reason="fraudulent",
        created_at=now,
    )
