"""Providers: per merchant, what decides ``auto`` (the priority, or routing rules), each
connector's mode, enabled, priority (editable), whether it has credentials, where the provider
sends its notifications (the connector's URL and events, from the registry), a write-only
credentials form, its health now and a remove button; and a form to add each provider the
merchant does not use yet. Every change goes through the connectors
service (the API's rules and messages); a refused form comes back with each message beside its
field (dashboard/connector_forms.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.checkouts.service import notification_url
from payorch.connectors import service
from payorch.dashboard.connector_forms import (
    PROVIDER_FORMS,
    Refusal,
    allowed_modes,
    create_request,
    credentials_request,
    refusal,
    settings_request,
)
from payorch.dashboard.health import MerchantProviders, merchant_providers
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, field, render
from payorch.errors import ApiError, ConnectorConfigAlreadyExists, ResourceNotFound
from payorch.http.deps import Conn, ReadConn
from payorch.providers.registration import Notifications
from payorch.providers.registry import REGISTRATIONS
from payorch.routing import service as routing

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

# Typed values a refused form shows again; credentials never are.
KEPT = ("provider", "mode", "priority", "enabled")
# What each provider sends payorch (None: nothing), declared in its registration.
NOTIFICATIONS: dict[str, Notifications | None] = {r.provider_id: r.notifications for r in REGISTRATIONS}


def _notification_urls(viewer: Viewer, merchants: list[MerchantProviders]) -> dict[str, str]:
    """Each connector's notification URL (by connector id), for the providers that send any."""
    return {
        row.connector.id: notification_url(viewer.runtime, row.connector.provider, row.connector.id)
        for entry in merchants
        for row in entry.connectors
        if NOTIFICATIONS.get(row.connector.provider) is not None
    }


async def _page(
    request: Request, viewer: Viewer, conn: AsyncConnection, refused: Refusal | None = None
) -> Response:
    merchants = await merchant_providers(conn, viewer)
    return render(
        request,
        "providers.html",
        viewer,
        status_code=refused.status if refused else 200,
        title="Providers",
        merchants=merchants,
        # What decides auto per merchant: its active routing version (None: the priority).
        routing={e.merchant.id: await routing.active_program(conn, e.merchant.id) for e in merchants},
        notifications=NOTIFICATIONS,
        notification_urls=_notification_urls(viewer, merchants),
        providers=PROVIDER_FORMS,
        modes=allowed_modes(viewer.caller.environment),
        refused=refused,
    )


@router.get("/providers")
async def providers(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    return await _page(request, viewer, conn)


def _values(form: FormData) -> dict[str, str]:
    return {name: field(form, name) for name in form}


def _typed(values: dict[str, str]) -> dict[str, str]:
    return {name: values[name] for name in KEPT if name in values}


@router.post("/providers/{merchant_id}/connectors")
async def add(merchant_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    values = _values(form)
    runtime = viewer.runtime
    try:
        created = await service.create_connector(
            conn, runtime.clock, runtime.cipher, viewer.caller, merchant_id, create_request(values)
        )
    except ResourceNotFound:
        raise  # another application's merchant: the 404 page
    except (ApiError, ValidationError) as exc:
        refused = refusal(f"add-{merchant_id}-{values.get('provider', '')}", exc, _typed(values))
        if isinstance(exc, ConnectorConfigAlreadyExists):
            refused.where = f"m-{merchant_id}"  # no add form for it any more: its merchant
        return await _page(request, viewer, conn, refused)
    return back_to(request, f"/providers?notice=added#{created.id}")


async def _provider_of(conn: AsyncConnection, viewer: Viewer, merchant_id: str, connector_id: str) -> str:
    """The connector's provider; 404 unless the merchant and the connector are this application's."""
    listed = await service.list_connectors(conn, viewer.caller, merchant_id)
    provider = next((c.provider for c in listed.items if c.id == connector_id), None)
    if provider is None:
        raise ResourceNotFound(f"No connector {connector_id}.")
    return provider


@router.post("/providers/{merchant_id}/{connector_id}/remove")
async def remove(
    merchant_id: str, connector_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    try:
        await service.remove_connector(conn, viewer.runtime.clock, viewer.caller, merchant_id, connector_id)
    except ResourceNotFound:
        raise
    except ApiError as exc:  # it took payments: disable it instead (the message says so)
        return await _page(request, viewer, conn, refusal(f"remove-{connector_id}", exc))
    return back_to(request, "/providers?notice=removed")


@router.post("/providers/{merchant_id}/{connector_id}")
async def change(
    merchant_id: str,
    connector_id: str,
    request: Request,
    viewer: ViewerDep,
    form: FormDep,
    conn: Conn,
) -> Response:
    provider = await _provider_of(conn, viewer, merchant_id, connector_id)
    values = _values(form)
    action = field(form, "action")
    credentials = action == "credentials"
    runtime = viewer.runtime
    try:
        update = credentials_request(provider, values) if credentials else settings_request(values)
        await service.update_connector(
            conn, runtime.clock, runtime.cipher, viewer.caller, merchant_id, connector_id, update
        )
    except ResourceNotFound:
        raise
    except (ApiError, ValidationError) as exc:
        where = f"{'credentials' if credentials else 'settings'}-{connector_id}"
        return await _page(request, viewer, conn, refusal(where, exc, {} if credentials else _typed(values)))
    notice = "credentials" if credentials else "priority"
    return back_to(request, f"/providers?notice={notice}#{connector_id}")
