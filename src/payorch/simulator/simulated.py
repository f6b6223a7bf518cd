"""What the simulator serves for one provider, declared once in its simulator package
(``simulator/<name>/simulated.py``) and listed in ``simulator/registry.py``.

The routes, the controls, the background jobs and the public purge read this record; nothing
else in the simulator names a provider (docs/providers.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from fastapi import APIRouter
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.crypto import Cipher
from payorch.db import Phases
from payorch.providers.registration import ProviderRegistration
from payorch.runtime import Runtime
from payorch.simulator.discrepancies.records import Discrepancies
from payorch.simulator.market.records import MarketOutcome
from payorch.simulator.outbox.records import Notifier

# Work to do once the move's transaction committed (e.g. send the notifications it wrote).
AfterCommit = Callable[[Runtime, Phases], Awaitable[None]]


@dataclass(frozen=True)
class Settlement:
    """What a settle control moved: the provider's references, and what to send after."""

    references: list[str]
    after_commit: AfterCommit | None = None


@dataclass(frozen=True)
class BuyerReturn:
    """Where the buyer's browser goes back to the shop once the page decided, as the page sends
    it: GET ``url`` (its query included, ``fields`` empty) or a POSTed form of ``fields``."""

    method: Literal["GET", "POST"]
    url: str
    fields: dict[str, str]


@dataclass(frozen=True)
class Bought:
    """What the market's buyer did at one checkout (docs/simulator.md, "The simulated market")."""

    outcome: MarketOutcome
    references: list[str]  # the provider's ids of what it decided
    back: BuyerReturn | None  # None: the buyer does not come back (the checkout stays open)
    after_commit: AfterCommit | None = None


# (conn, clock, public_url, owner, payment_intent_id, outcome) -> what moved, None: nothing to move.
Settle = Callable[[AsyncConnection, Clock, str, str, str, str], Awaitable[Settlement | None]]
# (conn, clock, public_url, owner, payment_intent_id, outcome) -> what the buyer did at the
# intent's checkout still open at this provider, as its page's buttons would; None: none open.
MarketBuy = Callable[[AsyncConnection, Clock, str, str, str, MarketOutcome], Awaitable[Bought | None]]
# (cipher, presented credentials) -> their owner: an application id, PUBLIC_OWNER, or None.
OwnerOf = Callable[[Cipher, Mapping[str, str]], str | None]
# (conn, before, limit) -> how many of the public owner's rows made before ``before`` went.
PurgePublic = Callable[[AsyncConnection, datetime, int], Awaitable[int]]


# (conn, clock, public_url, owner, seconds) -> the holds that lapsed, with what to send after.
AdvanceHolds = Callable[[AsyncConnection, Clock, str, str, int], Awaitable[Settlement]]
# (runtime, phases) -> how many holds past their end the worker's pass let lapse.
LapseDue = Callable[[Runtime, Phases], Awaitable[int]]


@dataclass(frozen=True)
class SimulatedHolds:
    """How a provider's simulator holds money (docs/simulator.md, "Holds"): the clock control
    moves an owner's holds nearer their end, and what lapses without being read."""

    advance: AdvanceHolds
    window_days: int  # how long after approval its holds lapse (the registration declares the same)
    # None: a lapsed hold is only seen when read (nothing is sent when it lapses).
    lapse_due: LapseDue | None = None


@dataclass(frozen=True)
class SimulatedProvider:
    registration: ProviderRegistration  # its id and its name under /simulator
    routers: tuple[APIRouter, ...]  # its wire API and the buyer's page (none in the API reference)
    owner_of: OwnerOf  # the MOCK credentials its registration derives, and its public ones
    settle: Settle  # the settle control (docs/simulator.md, "Controls")
    purge_public: PurgePublic  # what the public test credentials wrote (simulator/jobs.py)
    # The settle control in the API reference: what it moves for this provider, and what the
    # answer's ``references`` are (the operation's and the field's descriptions list each).
    settles: str
    settle_references: str
    market_buy: MarketBuy  # the simulated market's buyer (docs/simulator.md)
    discrepancies: Discrepancies  # the discrepancy control (docs/simulator.md)
    # How its notifications leave the outbox (simulator/outbox, docs/providers.md); None: it sends none.
    notifier: Notifier | None = None
    controls_routers: tuple[APIRouter, ...] = ()  # controls only this provider has
    holds: SimulatedHolds | None = None  # None: it cannot hold (it always captures)

    @property
    def provider_id(self) -> str:
        return self.registration.provider_id

    @property
    def name(self) -> str:
        """The simulator's name for it: ``{PUBLIC_URL}/simulator/<name>``, fault rows."""
        return self.registration.simulator_name
