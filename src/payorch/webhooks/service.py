"""The rules of webhook endpoints and deliveries (administration side).

Every function runs in the request's transaction (``conn``) and never commits.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.service import record_by
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.crypto import Cipher
from payorch.errors import ResourceNotFound, WebhookDeliveryAlreadySucceeded
from payorch.ids import new_id
from payorch.jsontypes import JsonObject
from payorch.limits import refuse_at_cap
from payorch.pagination import Page, id_range, page_of
from payorch.webhooks import repository, urls
from payorch.webhooks.records import (
    MANUAL,
    SUCCEEDED,
    Delivery,
    DeliveryAttempt,
    DeliveryFilter,
    WebhookEndpoint,
)
from payorch.webhooks.schemas import (
    CreateWebhookEndpoint,
    DeliveryListQuery,
    UpdateWebhookEndpoint,
)
from payorch.webhooks.signing import new_secret

ENDPOINT, DELIVERY = "webhook_endpoint", "webhook_delivery"  # the activity log's resource types
SHOWN_ONCE = {"secret": "shown once"}  # the activity log's note that a secret was read (never its value)


def url_origin(url: str) -> str:
    """The scheme, host and port of an endpoint's URL, as the activity log names it: its path,
    query and user part may hold a token of the receiver's."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}"


async def check_url(
    url: str, environment: str, resolver: urls.Resolver | None, *, sandbox_private: bool
) -> None:
    """PRODUCTION URLs are judged on what the name resolves to. SANDBOX names are judged at each
    delivery (resolved and pinned then), so here only the text and a literal address are:
    link-local and metadata addresses always refused, private ones unless ``sandbox_private``."""
    if environment == urls.PRODUCTION:
        await urls.vet(url, environment, resolver, sandbox_private=sandbox_private)
    else:
        urls.check_text(url, environment, sandbox_private=sandbox_private)


async def create_endpoint(
    conn: AsyncConnection,
    clock: Clock,
    cipher: Cipher,
    caller: Caller,
    request: CreateWebhookEndpoint,
    *,
    limit: int,
) -> tuple[WebhookEndpoint, str]:
    """The new endpoint and its secret (shown only in the creation's answer).

    At most ``limit`` endpoints per application (PAYORCH_MAX_WEBHOOK_ENDPOINTS), enabled or
    not: every event queues one delivery per endpoint in its request's transaction, so the cap
    bounds what one event costs."""
    await refuse_at_cap(
        conn,
        caller.application_id,
        repository.count_endpoints,
        limit=limit,
        what="webhook endpoints",
        remedy="Delete an endpoint it no longer needs, then create this one.",
    )
    now = clock.now()
    secret = new_secret()
    endpoint = WebhookEndpoint(
        id=new_id("whe"),
        application_id=caller.application_id,
        url=request.url,
        events=tuple(request.events or ()),
        enabled=True,
        ordered=request.ordered,
        secret_encrypted=cipher.encrypt(secret),
        created_at=now,
        updated_at=now,
    )
    await repository.insert_endpoint(conn, endpoint)
    created = await _endpoint(conn, caller, endpoint.id)
    logged = {"url": url_origin(created.url), "events": list(created.events), "ordered": created.ordered}
    await record_by(
        conn, clock, caller, "webhook_endpoint.created", (ENDPOINT, endpoint.id), logged | SHOWN_ONCE
    )
    return created, secret


async def get_endpoint(conn: AsyncConnection, caller: Caller, endpoint_id: str) -> WebhookEndpoint:
    return await _endpoint(conn, caller, endpoint_id)


async def list_endpoints(
    conn: AsyncConnection, caller: Caller, cursor: str | None, limit: int
) -> Page[WebhookEndpoint]:
    found = await repository.list_endpoints(conn, caller.application_id, before=cursor, limit=limit + 1)
    return page_of(found, limit, lambda item: item.id)


async def update_endpoint(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    endpoint_id: str,
    request: UpdateWebhookEndpoint,
) -> WebhookEndpoint:
    current = await _endpoint(conn, caller, endpoint_id)
    now = clock.now()
    # A field sent as null changes nothing, like a field left out.
    changes = (request.url, request.events, request.enabled, request.ordered)
    if any(value is not None for value in changes):
        await repository.update_endpoint(
            conn,
            caller.application_id,
            endpoint_id,
            url=request.url,
            events=request.events,
            enabled=request.enabled,
            ordered=request.ordered,
            now=now,
        )
    if request.enabled is not None and request.enabled != current.enabled:
        # Paused deliveries leave the claim queue (so a long backlog of a disabled endpoint costs
        # the workers nothing); enabling makes them due at once.
        # Enabling also ends the failure streak (a fresh start); disabling records when.
        await repository.set_disabled(
            conn,
            endpoint_id,
            reason=None if request.enabled else MANUAL,
            at=None if request.enabled else now,
        )
        if request.enabled:
            await repository.resume_deliveries(conn, endpoint_id, now=now)
            await repository.notify_workers(conn)
        else:
            await repository.pause_deliveries(conn, endpoint_id, now=now)
    updated = await _endpoint(conn, caller, endpoint_id)
    changed: JsonObject = {
        name: value
        for name, before, value in (
            ("url", url_origin(current.url), url_origin(updated.url)),
            ("events", list(current.events), list(updated.events)),
            ("enabled", current.enabled, updated.enabled),
            ("ordered", current.ordered, updated.ordered),
        )
        if before != value
    }
    if updated.url != current.url and "url" not in changed:
        changed["url"] = "path changed"  # the same origin: the path or query held the change
    if changed:  # a PATCH that changes nothing is no change
        await record_by(conn, clock, caller, "webhook_endpoint.updated", (ENDPOINT, endpoint_id), changed)
    return updated


async def delete_endpoint(conn: AsyncConnection, clock: Clock, caller: Caller, endpoint_id: str) -> None:
    if not await repository.delete_endpoint(conn, caller.application_id, endpoint_id):
        raise ResourceNotFound(f"No webhook endpoint {endpoint_id}.")
    await record_by(conn, clock, caller, "webhook_endpoint.deleted", (ENDPOINT, endpoint_id))


async def list_deliveries(conn: AsyncConnection, caller: Caller, query: DeliveryListQuery) -> Page[Delivery]:
    """The application's deliveries, newest first (``query.endpoint_id`` narrows to one
    endpoint, which must be the application's)."""
    if query.endpoint_id is not None:
        await _endpoint(conn, caller, query.endpoint_id)
    lowest, below = id_range("whd", query.cursor, query.from_, query.to)
    listed = DeliveryFilter(
        endpoint_id=query.endpoint_id,
        statuses=tuple(query.status or ()),
        event_type=query.event_type.value if query.event_type is not None else None,
        payment_intent_id=query.payment_intent_id,
    )
    found = await repository.list_deliveries(
        conn,
        caller.application_id,
        listed,
        lowest_id=lowest,
        below_id=below,
        limit=query.limit + 1,
    )
    return page_of(found, query.limit, lambda item: item.id)


async def get_delivery(
    conn: AsyncConnection, caller: Caller, endpoint_id: str, delivery_id: str
) -> tuple[Delivery, list[DeliveryAttempt]]:
    """The delivery and its attempt history, oldest attempt first."""
    delivery = await repository.get_delivery(conn, caller.application_id, endpoint_id, delivery_id)
    if delivery is None:
        raise ResourceNotFound(f"No delivery {delivery_id} for this endpoint.")
    return delivery, await repository.list_attempts(conn, delivery_id)


async def find_delivery(conn: AsyncConnection, delivery_id: str) -> Delivery | None:
    """By id alone (the operator's command line: `payorch webhooks retry whd_...`)."""
    return await repository.get_any_delivery(conn, delivery_id)


async def retry_delivery(
    conn: AsyncConnection, clock: Clock, caller: Caller, endpoint_id: str, delivery_id: str
) -> Delivery:
    delivery = await repository.get_delivery(
        conn, caller.application_id, endpoint_id, delivery_id, for_update=True
    )
    if delivery is None:
        raise ResourceNotFound(f"No delivery {delivery_id} for this endpoint.")
    if delivery.status == SUCCEEDED:
        raise WebhookDeliveryAlreadySucceeded()
    now = clock.now()
    in_flight = delivery.leased_until is not None and delivery.leased_until > now
    await repository.restart_schedule(conn, delivery_id, in_flight=in_flight, now=now)
    if not in_flight:
        await repository.notify_workers(conn)
    updated = await repository.get_delivery(conn, caller.application_id, endpoint_id, delivery_id)
    assert updated is not None  # locked above, in this transaction
    logged = {"webhook_endpoint_id": endpoint_id, "status": updated.status}
    await record_by(conn, clock, caller, "webhook_delivery.retried", (DELIVERY, delivery_id), logged)
    return updated


async def _endpoint(conn: AsyncConnection, caller: Caller, endpoint_id: str) -> WebhookEndpoint:
    endpoint = await repository.get_endpoint(conn, caller.application_id, endpoint_id)
    if endpoint is None:
        raise ResourceNotFound(f"No webhook endpoint {endpoint_id}.")
    return endpoint
