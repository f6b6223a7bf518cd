"""Reconciliation per day: the run, what matched per provider, the findings a person must look
at with a form to mark each resolved with a note, and a button to start (or run again) the day,
through the same service as /v1/reports/reconciliation."""

from __future__ import annotations

from datetime import date, timedelta

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.dashboard.web import DashboardRoute, FormDep, ViewerDep, back_to, field, render
from payorch.errors import ResourceNotFound
from payorch.http.deps import Conn, ReadConn
from payorch.jsontypes import JsonObject
from payorch.reconciliation import service
from payorch.reconciliation.days import accepted_days
from payorch.reconciliation.records import FindingAction, FindingStatus
from payorch.reconciliation.schemas import ResolveRequest, day_of, ended, report_body

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

# What each kind means, in a person's words (docs/reconciliation.md, "Findings").
KINDS = {
    "approved_not_recorded": "Paid at the provider, not recorded by payorch",
    "not_paid_at_provider": "Recorded by payorch, not paid at the provider",
    "amount_mismatch": "Amount or currency differ",
    "refunded_outside": "Refunded at the provider outside payorch",
    "dispute_not_recorded": "Dispute not recorded",
    "dispute_mismatch": "Dispute in another state at the provider",
}


def _day(viewer_today: date, text: str | None) -> date:
    """The page's day: ``?date=`` checked as the API checks it, else yesterday (the daily run's)."""
    return ended(day_of(text), viewer_today) if text else viewer_today - timedelta(days=1)


@router.get("/reconciliation")
async def day_page(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    now = viewer.runtime.clock.now()
    today = now.date()
    day = _day(today, request.query_params.get("date"))
    accepted = await accepted_days(conn, viewer.caller.application_id, now)
    report: JsonObject | None = None
    try:
        run, findings = await service.report_of(conn, viewer.caller, day)
        report = report_body(run, findings)
        flagged = (f for f in findings if f.action is FindingAction.FLAGGED)
        to_look_at = [f for f in flagged if f.status is FindingStatus.OPEN]
        done = [f for f in findings if f not in to_look_at]
    except ResourceNotFound:
        to_look_at, done = [], []  # no run for this day yet: the page offers one
    return render(
        request,
        "reconciliation.html",
        viewer,
        title=f"Reconciliation {day.isoformat()}",
        day=day.isoformat(),
        previous=(day - timedelta(days=1)).isoformat(),
        following=(day + timedelta(days=1)).isoformat() if day < today else None,
        report=report,
        to_look_at=to_look_at,
        done=done,
        kinds=KINDS,
        oldest=accepted.oldest.isoformat() if day < accepted.oldest else None,
        why=accepted.why,
    )


@router.post("/reconciliation")
async def start_run(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    now = viewer.runtime.clock.now()
    day = ended(day_of(field(form, "date")), now.date())
    most = viewer.runtime.settings.reconciliation_max_queued_runs
    await service.request_run(conn, viewer.runtime.clock, viewer.caller, day, most_queued=most)
    return back_to(request, f"/reconciliation?date={day.isoformat()}&notice=queued")


@router.post("/reconciliation/findings/{finding_id}/resolve")
async def resolve(
    finding_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    body = ResolveRequest.model_validate({"note": field(form, "note").strip()})
    finding = await service.resolve(conn, viewer.runtime.clock, viewer.caller, finding_id, body.note)
    return back_to(request, f"/reconciliation?date={finding.day}&notice=resolved")
