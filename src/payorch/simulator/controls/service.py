"""Rules of the controls: every change is scoped to the calling sandbox application."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.db import Phases
from payorch.errors import ResourceNotFound
from payorch.runtime import Runtime
from payorch.simulator import repository
from payorch.simulator.controls.access import require_sandbox
from payorch.simulator.controls.schemas import (
    Clocked,
    ClockRequest,
    Fault,
    Lapsed,
    Settled,
    SettleRequest,
)
from payorch.simulator.registry import BY_NAME, SIMULATED
from payorch.simulator.simulated import AfterCommit


async def set_fault(conn: AsyncConnection, clock: Clock, caller: Caller, provider: str, mode: str) -> Fault:
    require_sandbox(caller)
    simulated = BY_NAME[provider]
    await repository.set_fault_mode(conn, caller.application_id, simulated.name, mode, clock.now())
    return Fault(provider=simulated.provider_id, mode=mode)


async def list_faults(conn: AsyncConnection, caller: Caller) -> list[Fault]:
    require_sandbox(caller)
    modes = await repository.fault_modes(conn, caller.application_id)
    return [Fault(provider=s.provider_id, mode=modes.get(s.name, "ok")) for s in SIMULATED]


async def settle(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    caller: Caller,
    request: SettleRequest,
) -> tuple[Settled, AfterCommit | None]:
    """Move the intent's payments as ``request.outcome`` says, at the first provider (or only
    ``request.provider``) that has something to move. Returns the answer and what to send once
    this transaction commits."""
    require_sandbox(caller)
    owner = caller.application_id
    payment_intent_id, outcome = request.payment_intent_id, request.outcome
    only = BY_NAME[request.provider] if request.provider else None
    # Latest registered first: B's payments were always asked before A's transaction.
    for simulated in reversed(SIMULATED):
        if only is not None and simulated is not only:
            continue
        moved = await simulated.settle(conn, clock, public_url, owner, payment_intent_id, outcome)
        if moved is not None:
            answer = Settled(
                payment_intent_id=payment_intent_id,
                provider=simulated.provider_id,
                outcome=outcome,
                references=moved.references,
            )
            return answer, moved.after_commit
    raise ResourceNotFound(f"Nothing to {outcome} for this payment intent.")


async def advance_clock(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    caller: Caller,
    request: ClockRequest,
) -> tuple[Clocked, AfterCommit | None]:
    """Move the caller's holds ``request.advance_seconds`` nearer their end at each provider that
    holds (or only ``request.provider``, one that holds: the request's model refuses others);
    those past it lapse now. Returns the answer and what to send once this transaction commits."""
    require_sandbox(caller)
    only = BY_NAME[request.provider] if request.provider else None
    lapsed: list[Lapsed] = []
    afters: list[AfterCommit] = []
    for simulated in SIMULATED:
        if simulated.holds is None or (only is not None and simulated is not only):
            continue
        moved = await simulated.holds.advance(
            conn, clock, public_url, caller.application_id, request.advance_seconds
        )
        lapsed.append(Lapsed(provider=simulated.provider_id, references=moved.references))
        if moved.after_commit is not None:
            afters.append(moved.after_commit)
    return Clocked(advanced_seconds=request.advance_seconds, lapsed=lapsed), _all(afters)


def _all(afters: list[AfterCommit]) -> AfterCommit | None:
    if not afters:
        return None

    async def run(runtime: Runtime, phases: Phases) -> None:
        for after in afters:
            await after(runtime, phases)

    return run
