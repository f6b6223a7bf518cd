"""The rules of webhook endpoints and deliveries (administration side)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import Clock, isoformat
from payorch.crypto import Cipher
from payorch.errors import ResourceNotFound, WebhookDeliveryAlreadySucceeded
from payorch.ids import new_id
from payorch.webhooks import pagination, repository, urls
from payorch.webhooks.schemas import (
    CreateWebhookEndpoint,
    UpdateWebhookEndpoint,
    delivery_body,
    endpoint_body,
)
from payorch.webhooks.signing import new_secret


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
) -> dict[str, Any]:
    now = clock.now()
    secret = new_secret()
    endpoint_id = new_id("whe")
    values: dict[str, Any] = {
        "id": endpoint_id,
        "application_id": caller.application_id,
        "url": request.url,
        "events": request.events or [],
        "enabled": True,
        "secret_encrypted": cipher.encrypt(secret),
        "created_at": now,
        "updated_at": now,
    }
    await repository.insert_endpoint(conn, **values)
    row = await repository.get_endpoint(conn, caller.application_id, endpoint_id)
    return {"success": True, "data": {**endpoint_body(row), "secret": secret}}


async def get_endpoint(conn: AsyncConnection, caller: Caller, endpoint_id: str) -> dict[str, Any]:
    return endpoint_body(await _endpoint(conn, caller, endpoint_id))


async def list_endpoints(
    conn: AsyncConnection, caller: Caller, cursor: str | None, limit: int
) -> dict[str, Any]:
    rows = await repository.list_endpoints(
        conn, caller.application_id, before=pagination.decode(cursor), limit=limit + 1
    )
    return _page([endpoint_body(r) for r in rows], limit)


async def update_endpoint(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    endpoint_id: str,
    request: UpdateWebhookEndpoint,
) -> dict[str, Any]:
    current = await _endpoint(conn, caller, endpoint_id)
    changes: dict[str, Any] = request.model_dump(exclude_unset=True, exclude_none=True)
    now = clock.now()
    if changes:
        await repository.update_endpoint(
            conn, caller.application_id, endpoint_id, **changes, updated_at=now
        )
    if changes.get("enabled", current.enabled) != current.enabled:
        # Paused deliveries leave the claim queue (so a long backlog of a disabled endpoint costs
        # the workers nothing); enabling makes them due at once.
        if changes["enabled"]:
            await repository.resume_deliveries(conn, endpoint_id, now=now)
            await repository.notify_workers(conn)
        else:
            await repository.pause_deliveries(conn, endpoint_id, now=now)
    return endpoint_body(await _endpoint(conn, caller, endpoint_id))


async def delete_endpoint(conn: AsyncConnection, caller: Caller, endpoint_id: str) -> None:
    if not await repository.delete_endpoint(conn, caller.application_id, endpoint_id):
        raise ResourceNotFound(f"No webhook endpoint {endpoint_id}.")


async def list_deliveries(
    conn: AsyncConnection, caller: Caller, endpoint_id: str, cursor: str | None, limit: int
) -> dict[str, Any]:
    await _endpoint(conn, caller, endpoint_id)
    rows = await repository.list_deliveries(
        conn, caller.application_id, endpoint_id, before=pagination.decode(cursor), limit=limit + 1
    )
    return _page([delivery_body(r) for r in rows], limit)


async def get_delivery(
    conn: AsyncConnection, caller: Caller, endpoint_id: str, delivery_id: str
) -> dict[str, Any]:
    row = await repository.get_delivery(conn, caller.application_id, endpoint_id, delivery_id)
    if row is None:
        raise ResourceNotFound(f"No delivery {delivery_id} for this endpoint.")
    history = await repository.list_attempts(conn, delivery_id)
    body = delivery_body(row)
    body["attempt_history"] = [
        {
            "number": a.number,
            "at": isoformat(a.started_at),
            "duration_ms": a.duration_ms,
            "response_status": a.response_status,
            "response_excerpt": a.response_excerpt,
            "error": a.error,
        }
        for a in history
    ]
    return body


async def retry_delivery(
    conn: AsyncConnection, clock: Clock, caller: Caller, endpoint_id: str, delivery_id: str
) -> dict[str, Any]:
    row = await repository.get_delivery(
        conn, caller.application_id, endpoint_id, delivery_id, for_update=True
    )
    if row is None:
        raise ResourceNotFound(f"No delivery {delivery_id} for this endpoint.")
    if row.status == repository.SUCCEEDED:
        raise WebhookDeliveryAlreadySucceeded()
    await repository.restart_schedule(conn, delivery_id, now=clock.now())
    await repository.notify_workers(conn)
    updated = await repository.get_delivery(conn, caller.application_id, endpoint_id, delivery_id)
    return delivery_body(updated)


async def _endpoint(conn: AsyncConnection, caller: Caller, endpoint_id: str) -> Any:
    row = await repository.get_endpoint(conn, caller.application_id, endpoint_id)
    if row is None:
        raise ResourceNotFound(f"No webhook endpoint {endpoint_id}.")
    return row


def _page(items: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    more = len(items) > limit
    items = items[:limit]
    return {"items": items, "next_cursor": pagination.encode(items[-1]["id"]) if more else None}
