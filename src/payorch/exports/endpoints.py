"""HTTP of the exports: GET /v1/exports/{payments|refunds|disputes|balances}, streamed."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response, StreamingResponse

from payorch.errors import AuthenticationFailed, ValidationFailed
from payorch.exports import service
from payorch.exports.schemas import ExportKind, ExportQuery
from payorch.http.deps import CurrentCaller, runtime_of
from payorch.http.errors import problem_responses

router = APIRouter(tags=["Exports"])

_WHAT = {
    ExportKind.PAYMENTS: "The payments created in [from, to) (the rows GET /v1/payments lists "
    "for the same range), oldest first",
    ExportKind.REFUNDS: "The refunds created in [from, to), whatever their status, oldest first",
    ExportKind.DISPUTES: "The payments whose dispute opened in [from, to), with the dispute's "
    "status and kind, by payment id",
    ExportKind.BALANCES: "Per UTC day, currency and provider: authorized (payments created that "
    "day), refunded (succeeded refunds created that day), disputed (disputes opened that day and "
    "not won), net = authorized - refunded - disputed; days without any omitted",
}


def response(export: service.Export) -> StreamingResponse:
    disposition = f'attachment; filename="{export.filename}"'
    return StreamingResponse(
        export.content, media_type=export.media_type, headers={"Content-Disposition": disposition}
    )


def _route(kind: ExportKind) -> None:
    columns = ", ".join(service.SOURCES[kind].names)

    async def export(
        request: Request, caller: CurrentCaller, query: Annotated[ExportQuery, Query()]
    ) -> Response:
        return response(service.export(runtime_of(request).database.listing, caller, kind, query))

    export.__name__ = f"export_{kind.value}"
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
            **problem_responses(ValidationFailed, AuthenticationFailed),
        },
        summary=f"Export {kind.value} of a time range as CSV or JSON lines",
        description=f"{_WHAT[kind]}. Streamed: no cursor; amounts in minor units and formatted; "
        "times ISO 8601 UTC. In CSV a text cell gets a ' in front when it starts with a tab, a "
        "carriage return or ', or when its first visible character (after NFKC, past leading "
        "blanks and invisible characters) is =, +, - or @, so no spreadsheet runs it as a formula "
        "(docs/exports.md).",
    )(export)


for _kind in ExportKind:
    _route(_kind)
