"""The process's success rates, from its settings (composition.py)."""

from __future__ import annotations

from payorch.clock import Clock
from payorch.config import Settings
from payorch.redis_client import SharedRedis
from payorch.success_rates.counts import InProcessCounts, OutcomeCounts, RedisCounts, Window
from payorch.success_rates.ranking import WindowedSuccessRates

# Fewer attempts than this in a provider's window: no rate yet (it is measured first).
MIN_ATTEMPTS = 20


def build_success_rates(clock: Clock, redis: SharedRedis | None, settings: Settings) -> WindowedSuccessRates:
    window = Window(settings.routing_window_seconds, settings.routing_window_attempts)
    counts: OutcomeCounts = (
        RedisCounts(redis, clock, window) if redis is not None else InProcessCounts(clock, window)
    )
    return WindowedSuccessRates(counts, clock, settings.routing_exploration, MIN_ATTEMPTS)
