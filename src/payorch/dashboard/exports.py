"""Exports: a form (kind, from, to, format) and its download, the API's export for the signed-in
application (payorch.exports), streamed to the browser as an attachment."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.activity.listing import require_read
from payorch.dashboard.web import DashboardRoute, ViewerDep, render
from payorch.errors import ValidationFailed
from payorch.exports.schemas import ActivityExportQuery, ExportKind
from payorch.exports.streaming import streamed
from payorch.http.single_values import each_once

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

KINDS = (
    (ExportKind.PAYMENTS, "Payments", "created in the range"),
    (ExportKind.REFUNDS, "Refunds", "created in the range, any status"),
    (ExportKind.DISPUTES, "Disputes", "opened in the range: open, won or lost"),
    (
        ExportKind.BALANCES,
        "Daily balances",
        "per UTC day, currency and provider: authorized, refunded, disputed (held while open, "
        "and lost), net = authorized − refunded − disputed",
    ),
    (ExportKind.ACTIVITY, "Activity log", "who changed what, oldest first, with each entry's hash"),
    (ExportKind.PAYMENT_LINKS, "Payment links", "made in the range, with the payments each collected"),
)


class ExportForm(ActivityExportQuery):
    """The download form: the API's query and the kind (the activity log's filters, from its
    page's download link, for that kind only)."""

    kind: ExportKind


@router.get("/exports")
async def exports(request: Request, viewer: ViewerDep) -> Response:
    today = viewer.runtime.clock.now().date()
    return render(
        request,
        "exports.html",
        viewer,
        title="Exports",
        kinds=KINDS,
        yesterday=(today - timedelta(days=1)).isoformat(),
        today=today.isoformat(),
    )


@router.get("/exports/download")
async def download(request: Request, viewer: ViewerDep) -> Response:
    form = ExportForm.model_validate(each_once(request.query_params))  # a 400 page names what to fix
    if form.to <= form.from_:  # the API answers an empty range; a person most likely swapped them
        raise ValidationFailed.field("to", "must be after from")
    if form.kind is ExportKind.ACTIVITY:
        require_read(viewer.caller)
    else:
        for name in ("actor_id", "action", "resource_id"):
            if getattr(form, name) is not None:
                raise ValidationFailed.field(name, "narrows the activity log only")
    return await streamed(viewer.runtime, viewer.caller, form.kind, form)
