"""Routing's success-rate strategy (routing/strategy.py's SuccessRates): the provider with the
best recent authorization rate for the intent's currency first, a share of intents sent to
another so a provider that recovered is noticed.

- A provider with fewer than ``min_attempts`` in its window has no rate yet and goes first (in
  the priority order given) until it has: a new or long-quiet provider is measured at once.
- Exploration: an intent whose hash falls within ``exploration`` puts one of the others first
  (the same intent always ranks the same way, so a retried checkout does not wander).
- The counts are read at most once per CACHE_SECONDS of the runtime clock per (merchant,
  currency, providers): a decision costs a dictionary look-up and a sort of a few providers.
- Unavailable providers are still skipped by routing while trying (routing/attempts.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from payorch.clock import Clock
from payorch.routing.strategy import Ranking, Score
from payorch.success_rates.counts import OutcomeCounts, Tally, count_key

CACHE_SECONDS = 1.0
CACHE_ENTRIES = 10_000  # then the cache starts afresh (each entry is refilled by one read)


@dataclass(frozen=True, slots=True)
class _Cached:
    read_at: float
    tallies: tuple[Tally, ...]


def _fraction(intent_id: str, salt: str) -> float:
    """A number in [0, 1) fixed by the intent id."""
    digest = hashlib.sha256(f"{salt}:{intent_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class WindowedSuccessRates:
    def __init__(self, counts: OutcomeCounts, clock: Clock, exploration: float, min_attempts: int) -> None:
        self._counts = counts
        self._clock = clock
        self._exploration = exploration
        self._min_attempts = min_attempts
        self._cache: dict[tuple[str, str, tuple[str, ...]], _Cached] = {}

    async def _tallies(
        self, merchant_account_id: str, currency: str, providers: tuple[str, ...]
    ) -> tuple[Tally, ...]:
        key = (merchant_account_id, currency, providers)
        now = self._clock.now().timestamp()
        cached = self._cache.get(key)
        if cached is not None and 0 <= now - cached.read_at < CACHE_SECONDS:
            return cached.tallies
        keys = [count_key(merchant_account_id, currency, p) for p in providers]
        tallies = tuple(await self._counts.window(keys))
        if len(self._cache) >= CACHE_ENTRIES:
            self._cache.clear()
        self._cache[key] = _Cached(now, tallies)
        return tallies

    def _score(self, tally: Tally) -> Score:
        if tally.attempts < self._min_attempts:
            return Score(None, tally.attempts)
        return Score(tally.authorized / tally.attempts, tally.attempts)

    async def rank(
        self, merchant_account_id: str, currency: str, providers: Sequence[str], intent_id: str
    ) -> Ranking:
        given = tuple(providers)
        tallies = await self._tallies(merchant_account_id, currency, given)
        scores = {p: self._score(t) for p, t in zip(given, tallies, strict=True)}
        # Unmeasured first (priority order), then by rate, the priority order breaking ties.
        order = sorted(
            range(len(given)),
            key=lambda i: (scores[given[i]].rate is not None, -(scores[given[i]].rate or 0.0), i),
        )
        ranked = [given[i] for i in order]
        explored = False
        if len(ranked) > 1 and _fraction(intent_id, "explore") < self._exploration:
            others = ranked[1:]
            pick = others[int(_fraction(intent_id, "which") * len(others))]
            ranked = [pick, *(p for p in ranked if p != pick)]
            explored = True
        return Ranking(tuple(ranked), scores, explored=explored)

    async def provider_failed(self, merchant_account_id: str, currency: str, provider: str) -> None:
        await self._counts.add(count_key(merchant_account_id, currency, provider), False)

    async def payment_decided(
        self, merchant_account_id: str, currency: str, provider: str, authorized: bool
    ) -> None:
        await self._counts.add(count_key(merchant_account_id, currency, provider), authorized)
