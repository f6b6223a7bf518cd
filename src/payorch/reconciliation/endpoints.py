"""HTTP of reconciliation reports: ask for a day's run, read its report."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from payorch.errors import (
    AuthenticationFailed,
    InvalidState,
    LimitExceeded,
    ResourceNotFound,
    ValidationFailed,
)
from payorch.http.deps import Conn, CurrentCaller, ReadConn, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.responses import json_response
from payorch.reconciliation import service
from payorch.reconciliation.schemas import (
    DATE_PATTERN,
    DATE_SCHEMA,
    FindingBody,
    ReconciliationReport,
    ReconciliationRequest,
    ReconciliationRun,
    ResolveRequest,
    day_of,
    ended,
    finding_body,
    report_body,
    run_body,
)

router = APIRouter(tags=["Reports"])


@router.post(
    "/v1/reports/reconciliation",
    status_code=202,
    response_model=ReconciliationRun,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, InvalidState, LimitExceeded),
    summary="Reconcile a day with every provider",
    description="Queues the day's reconciliation for the caller's application: a worker reads "
    "each enabled connector's records of the day from its provider and compares them with "
    "payorch's payments, refunds and disputes (docs/reconciliation.md). While the day's run is "
    "QUEUED or RUNNING, asking again answers that run and starts nothing more. A day older "
    "than the application's providers answer about (or than the application) is 400, its "
    "message naming the oldest day accepted; a day to come is 409 INVALID_STATE; one more run "
    "while PAYORCH_RECONCILIATION_MAX_QUEUED_RUNS of the application's wait is 409 "
    "LIMIT_EXCEEDED (details: limit, current).",
)
async def request_reconciliation(
    body: ReconciliationRequest, caller: CurrentCaller, request: Request, conn: Conn
) -> Response:
    runtime = runtime_of(request)
    now = runtime.clock.now()
    day = ended(day_of(body.date), now.date())
    most = runtime.settings.reconciliation_max_queued_runs
    run = await service.request_run(conn, runtime.clock, caller, day, most_queued=most)
    return json_response(run_body(run), 202)


@router.get(
    "/v1/reports/reconciliation",
    response_model=ReconciliationReport,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound),
    summary="A day's reconciliation report",
    description="Per provider: the payments that matched (count and amounts per currency), "
    "how many findings, and why a provider could not be read; then every finding with both "
    "sides' values and a link to its payment intent.",
)
async def reconciliation_report(
    caller: CurrentCaller,
    request: Request,
    conn: ReadConn,
    date: Annotated[
        str,
        Query(pattern=DATE_PATTERN, json_schema_extra=DATE_SCHEMA, description="The day, YYYY-MM-DD (UTC)"),
    ],
) -> Response:
    day = day_of(date)  # a day to come has no run: 404
    run, findings = await service.report_of(conn, caller, day)
    return json_response(report_body(run, findings))


@router.post(
    "/v1/reports/reconciliation/findings/{finding_id}/resolve",
    response_model=FindingBody,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound, InvalidState),
    summary="Mark a finding resolved, with a note",
    description='A person dealt with the finding (docs/reconciliation.md, "Findings and what a '
    'person does"): it becomes RESOLVED with the note and the time. A finding of another '
    "application is 404; one resolved already (APPLIED ones are, by reconciliation) is 409.",
)
async def resolve_finding(
    finding_id: str, body: ResolveRequest, caller: CurrentCaller, request: Request, conn: Conn
) -> Response:
    finding = await service.resolve(conn, runtime_of(request).clock, caller, finding_id, body.note)
    return json_response(finding_body(finding))
