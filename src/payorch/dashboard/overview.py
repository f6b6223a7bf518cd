"""The overview: the last 24 hours and 7 days at a glance, drawn by the server."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.dashboard.health import merchant_providers
from payorch.dashboard.web import DashboardRoute, ViewerDep, render
from payorch.http.deps import ListConn
from payorch.intents import stats as intent_stats
from payorch.payments import hold_reads
from payorch.payments import stats as payment_stats
from payorch.success_rates.history import ProviderRecord, provider_records
from payorch.webhooks import stats as webhook_stats

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

WINDOWS = (("Last 24 hours", timedelta(hours=24)), ("Last 7 days", timedelta(days=7)))
# How the chart groups an intent's status: paid, not paid, still open.
AUTHORIZED = frozenset({"AUTHORIZED", "PARTIALLY_REFUNDED", "REFUNDED"})
FAILED = frozenset({"FAILED", "EXPIRED", "CANCELLED"})
CHART_WIDTH, CHART_HEIGHT, BAR_GAP = 720, 160, 4
HOLDS_SHOWN = 10  # the holds that lapse first; the payments list filters all of them


@dataclass(frozen=True, slots=True)
class Window:
    label: str
    statuses: dict[str, int]
    authorized: dict[str, int]
    refunded: dict[str, int]
    providers: list[ProviderRecord]  # authorization rate and volume per provider


@dataclass(frozen=True, slots=True)
class Bar:
    """One hour of the chart: stacked rectangles (y, height, css class) and its label."""

    x: int
    width: int
    rects: list[tuple[int, int, str]]
    label: str
    title: str


def scale_top(peak: int) -> int:
    """The chart's top: four equal steps of 1, 2, 3 or 5 times a power of ten, at or above
    ``peak`` (so the scale's labels are round numbers)."""
    magnitude = 1
    while True:
        for factor in (1, 2, 3, 5):
            if 4 * factor * magnitude >= peak:
                return 4 * factor * magnitude
        magnitude *= 10


def chart(now: datetime, rows: list[tuple[str, str, int]]) -> tuple[list[Bar], int]:
    """24 hourly bars ending with the current hour, stacked authorized / failed / open, drawn
    against the scale of ``scale_top`` of the busiest hour; with that busiest hour's count."""
    counts: dict[str, dict[str, int]] = {}
    for hour_text, status, count in rows:
        kind = "ok" if status in AUTHORIZED else "bad" if status in FAILED else "other"
        counts.setdefault(hour_text, {}).setdefault(kind, 0)
        counts[hour_text][kind] += count
    start = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=23)
    hours = [start + timedelta(hours=i) for i in range(24)]
    peak = max([sum(c.values()) for c in counts.values()] + [0])
    top = scale_top(peak)
    width = CHART_WIDTH // 24
    bars = []
    for i, hour in enumerate(hours):
        found = counts.get(hour.strftime("%Y-%m-%d %H"), {})
        y = CHART_HEIGHT
        rects = []
        for kind in ("ok", "bad", "other"):
            height = round(found.get(kind, 0) * CHART_HEIGHT / top)
            if height:
                y -= height
                rects.append((y, height, kind))
        title = (
            f"{hour:%H}:00 UTC: {found.get('ok', 0)} authorized, {found.get('bad', 0)} failed, "
            f"{found.get('other', 0)} open"
        )
        bars.append(Bar(i * width, width - BAR_GAP, rects, f"{hour:%H}", title))
    return bars, peak


@router.get("/overview")
async def overview(request: Request, viewer: ViewerDep, conn: ListConn) -> Response:
    app_id = viewer.caller.application_id
    now = viewer.runtime.clock.now()
    windows = [
        Window(
            label,
            await intent_stats.status_counts(conn, app_id, now - span),
            await payment_stats.authorized_by_currency(conn, app_id, now - span),
            await payment_stats.refunded_by_currency(conn, app_id, now - span),
            await provider_records(conn, app_id, now - span),
        )
        for label, span in WINDOWS
    ]
    bars, peak = chart(now, await intent_stats.hourly_status_counts(conn, app_id, now - timedelta(hours=24)))
    top = scale_top(peak)
    # The scale: five round values from 0 to the top, each with its gridline's height.
    ticks = [(top * i // 4, CHART_HEIGHT - CHART_HEIGHT * i // 4) for i in range(5)]
    return render(
        request,
        "overview.html",
        viewer,
        title="Overview",
        windows=windows,
        bars=bars,
        peak=peak,
        top=top,
        ticks=ticks,
        chart_width=CHART_WIDTH,
        chart_height=CHART_HEIGHT,
        merchants=await merchant_providers(conn, viewer),
        deliveries=await webhook_stats.delivery_health(conn, app_id, now - timedelta(days=7)),
        held=await hold_reads.totals(conn, app_id),
        holds=await hold_reads.soonest(conn, app_id, HOLDS_SHOWN),
        now=now,
    )
