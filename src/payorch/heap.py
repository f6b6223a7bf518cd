"""The garbage collector's settings for a long-running process (an API process, a worker).

A process holds a large, permanent heap after start-up (modules, the FastAPI app and its
routes, SQLAlchemy's tables and compiled statements, pydantic validators). CPython's collector
walks the tracked objects of a generation each time it runs, and with the default threshold
(a young collection every 700 allocations net) it ran often enough that a create spent a large
share of its CPU collecting (docs/performance-decisions.md, "The garbage collector"). So, once start-up
is done: the start-up heap is frozen (never walked again, never freed: it lives as long as the
process anyway), and young collections run every YOUNG_THRESHOLD allocations net. Reference
counting still frees almost everything at once; the collector is only for cycles.
"""

from __future__ import annotations

import gc

from payorch.observability.metrics import GC_FROZEN_OBJECTS

YOUNG_THRESHOLD = 20_000  # CPython's default is 700; the older generations keep theirs


def settle() -> None:
    """Call once, when start-up is done and before serving."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
    GC_FROZEN_OBJECTS.set(gc.get_freeze_count())
