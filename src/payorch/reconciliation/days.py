"""Which days an application may ask to reconcile (docs/reconciliation.md, "Asking for a day").

The oldest is the oldest day one of its enabled connectors' providers still answers about (each
provider's reader declares its window, providers/<name>/reconciliation.py), and never a day
before the application existed: payorch holds nothing of it to compare, and a provider's list
would only show the merchant's other payments as orphans. The newest is today (UTC).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import service as applications
from payorch.errors import ValidationFailed
from payorch.providers.reconciliation import oldest_day
from payorch.providers.registry import registration_of
from payorch.reconciliation import repository

CREATED = "the day the application was created"


@dataclass(frozen=True, slots=True)
class AcceptedDays:
    oldest: date
    why: str  # what sets ``oldest``, in a person's words


async def accepted_days(conn: AsyncConnection, application_id: str, now: datetime) -> AcceptedDays:
    application = await applications.find_application(conn, application_id)
    assert application is not None  # the caller's own
    created = application.created_at.date()
    reach: list[tuple[date, str]] = []
    for provider in sorted(
        {provider for _, provider in await repository.enabled_connectors(conn, application_id)}
    ):
        registration = registration_of(provider)
        reader = registration.reconciliation
        if reader is None:
            continue
        lookback = reader.lookback()
        if lookback is None:
            return AcceptedDays(created, CREATED)
        name = registration.display_name
        reach.append((oldest_day(now, lookback), f"{name} answers for {lookback.days} days back"))
    oldest, why = min(reach, default=(created, CREATED))
    if oldest <= created:
        return AcceptedDays(created, CREATED)
    return AcceptedDays(oldest, f"the oldest day the application's providers answer about: {why}")


def refuse_too_old(day: date, accepted: AcceptedDays) -> None:
    """400 for a day no provider of the application can answer about."""
    if day < accepted.oldest:
        raise ValidationFailed.field(
            "date",
            f"must be {accepted.oldest.isoformat()} or later ({accepted.why}); "
            f"{day.isoformat()} cannot be reconciled",
        )
