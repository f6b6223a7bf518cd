"""Per-application caps on what a tenant can create (PAYORCH_MAX_WEBHOOK_ENDPOINTS,
PAYORCH_MAX_API_KEYS): counted under the application's row lock, so concurrent creates at the
cap take turns and the later one counts the earlier one's row."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import service as applications
from payorch.errors import LimitExceeded


async def refuse_at_cap(
    conn: AsyncConnection,
    application_id: str,
    count: Callable[[AsyncConnection, str], Awaitable[int]],
    *,
    limit: int,
    what: str,
    remedy: str,
) -> None:
    """Raise 409 LIMIT_EXCEEDED when the application already has ``limit`` of ``what``
    (``count`` counts them); otherwise the lock is held until the caller's transaction ends,
    so its insert is counted by the next create. SQLite's BEGIN IMMEDIATE serializes anyway."""
    await applications.lock_application(conn, application_id)
    current = await count(conn, application_id)
    if current >= limit:
        raise LimitExceeded(what, limit=limit, current=current, remedy=remedy)
