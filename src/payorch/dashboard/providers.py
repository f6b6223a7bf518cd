"""Providers: per merchant, each connector's mode, enabled, priority (editable), whether it has
credentials, a write-only credentials form, and its health now."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.connectors import service
from payorch.connectors.schemas import UpdateConnector
from payorch.dashboard.health import merchant_providers
from payorch.dashboard.web import DashboardRoute, FormDep, ViewerDep, back_to, field, render
from payorch.errors import ResourceNotFound, ValidationFailed
from payorch.http.deps import Conn, ReadConn
from payorch.providers.registry import REGISTRATIONS

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

# The credential fields of each provider, from its own model (never their values: write-only).
CREDENTIAL_FIELDS = {r.provider_id: r.credential_fields for r in REGISTRATIONS}


@router.get("/providers")
async def providers(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    return render(
        request,
        "providers.html",
        viewer,
        title="Providers",
        merchants=await merchant_providers(conn, viewer),
        credential_fields=CREDENTIAL_FIELDS,
    )


def _change(form_action: str, provider: str, form: dict[str, str]) -> UpdateConnector:
    if form_action == "credentials":
        given = {name: form.get(name, "") for name in CREDENTIAL_FIELDS.get(provider, ())}
        missing = [name for name, value in given.items() if not value]
        if missing:
            raise ValidationFailed.field("credentials", f"fill in {', '.join(missing)}")
        return UpdateConnector(credentials=given)
    priority = form.get("priority", "")
    # ASCII digits only: str.isdigit() also takes '²', which int() refuses.
    if not (priority.isascii() and priority.isdigit()):
        raise ValidationFailed.field("priority", "must be a whole number such as 1")
    return UpdateConnector(priority=int(priority), enabled=form.get("enabled") == "on")


@router.post("/providers/{merchant_id}/{connector_id}")
async def change(
    merchant_id: str,
    connector_id: str,
    request: Request,
    viewer: ViewerDep,
    form: FormDep,
    conn: Conn,
) -> Response:
    # 404 unless the merchant and the connector are this application's.
    listed = await service.list_connectors(conn, viewer.caller, merchant_id)
    provider = next((c.provider for c in listed.items if c.id == connector_id), None)
    if provider is None:
        raise ResourceNotFound(f"No connector {connector_id}.")
    values = {name: field(form, name) for name in form}
    action = field(form, "action")
    update = _change(action, provider, values)
    runtime = viewer.runtime
    await service.update_connector(
        conn, runtime.clock, runtime.cipher, viewer.caller, merchant_id, connector_id, update
    )
    return back_to(request, f"/providers?notice={action}#{connector_id}")
