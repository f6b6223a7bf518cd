"""What each simulated provider does for the discrepancy control (docs/simulator.md,
"Discrepancies"), declared in its ``simulator/<name>/discrepancies.py``.

Every function runs in the control's transaction and raises ValidationFailed for what the
provider refuses (its own words in the message)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.simulator.outbox import repository as outbox

DiscrepancyKind = Literal["refunded_at_provider", "approved_unreturned", "amount_changed", "orphan"]

# (conn, owner, references the market's buyer answered) -> None: their notifications are given
# up unsent, as if every attempt had failed (no return, no notice).
Silence = Callable[[AsyncConnection, str, Sequence[str]], Awaitable[None]]
# (conn, clock, owner, payment reference, amount in minor units or None for the rest) -> the
# provider's id of the refund, made as its own console would.
Refund = Callable[[AsyncConnection, Clock, str, str, int | None], Awaitable[str]]
# (conn, owner, payment reference, amount or None, currency or None) -> None: the provider's
# record of the payment now shows them.
ChangeAmount = Callable[[AsyncConnection, str, str, int | None, str | None], Awaitable[None]]
# (conn, clock, public_url, owner, amount, currency) -> the provider's ids of a paid payment
# that no payment intent made.
Orphan = Callable[[AsyncConnection, Clock, str, str, int, str], Awaitable[list[str]]]


# Why the silence control's notifications were never sent (their last_error).
HELD_BACK = "held back by the discrepancy control"


def held_back(provider: str) -> Silence:
    """The silence of a provider whose notifications leave by the outbox: those written about the
    references are never sent (``provider``: its simulator name, as its ``Notifier`` says)."""

    async def silence(conn: AsyncConnection, owner: str, references: Sequence[str]) -> None:
        await outbox.hold_back(conn, provider, owner, references, HELD_BACK)

    return silence


@dataclass(frozen=True)
class Discrepancies:
    silence: Silence
    refund: Refund
    change_amount: ChangeAmount
    orphan: Orphan | None  # None: the provider's reconciliation cannot see one (docs/reconciliation.md)
