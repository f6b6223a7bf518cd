"""HTTP of the exports: GET /v1/exports/{payments|refunds|disputes|balances}, streamed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response, StreamingResponse

from payorch.errors import AuthenticationFailed, LimitExceeded, ValidationFailed
from payorch.exports import service
from payorch.exports.schemas import ActivityExportQuery, ExportKind, ExportQuery
from payorch.exports.streaming import streamed
from payorch.http.deps import CurrentCaller, runtime_of
from payorch.http.errors import problem_responses

router = APIRouter(tags=["Exports"])

_WHAT = {
    ExportKind.PAYMENTS: "The payments created in [from, to) (the rows GET /v1/payments lists "
    "for the same range), oldest first; the last column, payment_link_id, is the payment link "
    "the payment came from (empty for others)",
    ExportKind.REFUNDS: "The refunds created in [from, to), whatever their status, oldest first",
    ExportKind.DISPUTES: "The payments whose dispute opened in [from, to), with the dispute's "
    "status and kind, by payment id",
    ExportKind.BALANCES: "Per UTC day, currency and provider: authorized (payments created that "
    "day), refunded (succeeded refunds created that day), disputed (disputes opened that day and "
    "not won) = disputed_held (still open) + disputed_lost, net = authorized - refunded - disputed; "
    "days without any omitted",
    ExportKind.ACTIVITY: "The activity log's entries at in [from, to), oldest first by seq (the "
    "chain's order), narrowed by actor_id, action and resource_id as GET /v1/admin/activity; "
    "changes as compact JSON text. Needs activity:read (not exports:read)",
    ExportKind.PAYMENT_LINKS: "The payment links made in [from, to), oldest first, each with its "
    "status as stored, max_payments, and what it collected: payments_count and amount_collected "
    "(its intents the provider authorized, refunded or not)",
}


def _route(kind: ExportKind) -> None:
    async def export(
        request: Request, caller: CurrentCaller, query: Annotated[ExportQuery, Query()]
    ) -> Response:
        return await streamed(runtime_of(request), caller, kind, query)

    export.__name__ = f"export_{kind.value}"
    _declare(kind, export)


async def export_activity(
    request: Request, caller: CurrentCaller, query: Annotated[ActivityExportQuery, Query()]
) -> Response:
    return await streamed(runtime_of(request), caller, ExportKind.ACTIVITY, query)


def _declare(kind: ExportKind, export: Callable[..., Awaitable[Response]]) -> None:
    columns = ", ".join(service.SOURCES[kind].names)
    router.get(
        f"/v1/exports/{kind.value}",
        response_class=StreamingResponse,
        responses={
            200: {
                "description": f"Columns, in order: {columns}.",
                "content": {
                    "text/csv": {"schema": {"type": "string"}},
                    "application/x-ndjson": {"schema": {"type": "string"}},
                },
            },
            **problem_responses(ValidationFailed, AuthenticationFailed, LimitExceeded),
        },
        summary=f"Export {kind.value} of a time range as CSV or JSON lines",
        description=f"{_WHAT[kind]}. Streamed: no cursor; amounts in minor units and formatted; "
        "times ISO 8601 UTC. In CSV a text cell gets a ' in front when it starts with a tab, a "
        "carriage return or ', or when its first visible character (after NFKC, past leading "
        "blanks and invisible characters) is =, +, - or @, so no spreadsheet runs it as a formula "
        "(docs/exports.md). Made only as fast as it is read; an application streams at most "
        "PAYORCH_MAX_CONCURRENT_EXPORTS exports at once (one more: 409 LIMIT_EXCEEDED), and an "
        "export whose reader takes nothing for PAYORCH_EXPORT_STALL_SECONDS is ended.",
    )(export)


for _kind in ExportKind:
    if _kind is ExportKind.ACTIVITY:
        _declare(_kind, export_activity)
    else:
        _route(_kind)
