"""The connectors' priority order, written once: lowest number first, then the oldest. Routing
tries them in it; lists show them in it."""

from __future__ import annotations

from collections.abc import Iterable

from payorch.connectors.records import Connector


def by_priority(connectors: Iterable[Connector]) -> list[Connector]:
    return sorted(connectors, key=lambda c: (c.priority, c.created_at, c.id))
