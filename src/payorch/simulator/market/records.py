"""What a market is and what the buyer may do: the four outcomes, in the market's words."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

# approve: paid; decline: the provider refuses the payment; give_up: the buyer leaves without
# paying (not the provider's doing); pending: the payment is left in process at the provider.
MarketOutcome = Literal["approve", "decline", "give_up", "pending"]
MARKET_OUTCOMES: tuple[MarketOutcome, ...] = ("approve", "decline", "give_up", "pending")


@dataclass(frozen=True, slots=True)
class SimMarket:
    owner: str
    provider: str  # the simulator's name (SimulatedProvider.name)
    approve: float
    decline: float
    give_up: float
    pending: float
    updated_at: datetime

    def draw(self, chance: random.Random) -> MarketOutcome:
        """One buyer's outcome, each with its probability."""
        point = chance.random()
        for outcome in MARKET_OUTCOMES[:-1]:
            share: float = getattr(self, outcome)
            if point < share:
                return outcome
            point -= share
        return "pending"
