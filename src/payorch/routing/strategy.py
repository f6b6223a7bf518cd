"""The success-rate strategy's port (docs/routing.md, "Default: success rate").

Routing asks ``SuccessRates.rank`` when a merchant's default is ``success_rate`` and no rule
decided; the implementation (recent authorization rates per provider and currency, with
exploration) lives outside routing and is given to the Runtime at construction. Until one is
given, ``PriorityFallback`` keeps the priority order and the record says so (``fallback``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Score:
    rate: float | None  # the authorization rate in the window, 0 to 1; None: no data yet
    attempts: int  # attempts counted in the window


@dataclass(frozen=True, slots=True)
class Ranking:
    providers: tuple[str, ...]  # best first, exploration applied; only providers it was given
    scores: Mapping[str, Score] = field(default_factory=dict)
    explored: bool = False  # exploration put a provider other than the best first
    fallback: bool = False  # no rates to rank by: the priority order it was given


class SuccessRates(Protocol):
    async def rank(
        self, merchant_account_id: str, currency: str, providers: Sequence[str], intent_id: str
    ) -> Ranking:
        """``providers``: enabled, able to charge ``currency``, in priority order (the tie-break)."""
        ...

    async def provider_failed(self, merchant_account_id: str, currency: str, provider: str) -> None:
        """A checkout's creation found ``provider`` down (an error or no answer): it counts
        against the provider (routing/attempts.py calls it, for ``auto`` and explicit alike)."""
        ...

    async def payment_decided(
        self, merchant_account_id: str, currency: str, provider: str, authorized: bool
    ) -> None:
        """A checkout's payment was authorized or failed at ``provider`` (success_rates/observe.py,
        after the move committed); a buyer giving up is not reported."""
        ...


class PriorityFallback:
    """No success rates: the order given, marked as a fallback."""

    async def rank(
        self, merchant_account_id: str, currency: str, providers: Sequence[str], intent_id: str
    ) -> Ranking:
        return Ranking(tuple(providers), fallback=True)

    async def provider_failed(self, merchant_account_id: str, currency: str, provider: str) -> None:
        return None

    async def payment_decided(
        self, merchant_account_id: str, currency: str, provider: str, authorized: bool
    ) -> None:
        return None
