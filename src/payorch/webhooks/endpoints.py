"""HTTP of the webhooks domain: endpoint administration, deliveries and manual retry."""

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
    WebhookDeliveryAlreadySucceeded,
    WebhookEndpointUrlNotAllowed,
)
from payorch.http.deps import Conn, CurrentCaller, ListConn, ReadConn, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.listing import list_route
from payorch.http.responses import json_response
from payorch.webhooks import service, tools
from payorch.webhooks.recover import recover_deliveries
from payorch.webhooks.schemas import (
    CreatedWebhookEndpoint,
    CreateWebhookEndpoint,
    DeliveryListQuery,
    EndpointDeliveryListQuery,
    EndpointListQuery,
    RecoverDeliveries,
    RecoveredDeliveries,
    RotateWebhookSecret,
    UpdateWebhookEndpoint,
    WebhookDeliveryDetail,
    WebhookDeliveryList,
    WebhookDeliveryResponse,
    WebhookEndpointList,
    WebhookEndpointResponse,
    created_endpoint_body,
    delivery_body,
    delivery_page_body,
    delivery_with_history_body,
    endpoint_body,
    endpoint_page_body,
)

router = APIRouter(tags=["Webhooks"])
BASE = "/v1/admin/webhook-endpoints"


@router.post(
    BASE,
    status_code=201,
    response_model=CreatedWebhookEndpoint,
    responses=problem_responses(
        ValidationFailed, WebhookEndpointUrlNotAllowed, AuthenticationFailed, LimitExceeded
    ),
    summary="Create a webhook endpoint (its secret is shown only in this answer)",
    description="At most PAYORCH_MAX_WEBHOOK_ENDPOINTS per application, enabled or not: one "
    "more is 409 LIMIT_EXCEEDED (details: limit, current).",
)
async def create_webhook_endpoint(
    body: CreateWebhookEndpoint, caller: CurrentCaller, request: Request, conn: Conn
) -> Response:
    runtime = runtime_of(request)
    # Resolve before the first statement: no transaction is open while DNS answers.
    await service.check_url(
        body.url,
        caller.environment,
        runtime.webhook_resolver,
        sandbox_private=runtime.settings.sandbox_webhooks_private_allowed,
    )
    created, secret = await service.create_endpoint(
        conn,
        runtime.clock,
        runtime.cipher,
        caller,
        body,
        limit=runtime.settings.max_webhook_endpoints,
    )
    return json_response(created_endpoint_body(created, secret), 201)


@list_route(
    router,
    BASE,
    model=WebhookEndpointList,
    summary="List webhook endpoints, newest first (no secrets)",
)
async def list_webhook_endpoints(
    caller: CurrentCaller,
    conn: ReadConn,
    query: Annotated[EndpointListQuery, Query()],
) -> Response:
    page = await service.list_endpoints(conn, caller, query.cursor, query.limit)
    return json_response(endpoint_page_body(page))


@router.get(
    BASE + "/{endpoint_id}",
    response_model=WebhookEndpointResponse,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound),
    summary="Read a webhook endpoint",
)
async def get_webhook_endpoint(endpoint_id: str, caller: CurrentCaller, conn: ReadConn) -> Response:
    return json_response(endpoint_body(await service.get_endpoint(conn, caller, endpoint_id)))


@router.patch(
    BASE + "/{endpoint_id}",
    response_model=WebhookEndpointResponse,
    responses=problem_responses(
        ValidationFailed, WebhookEndpointUrlNotAllowed, AuthenticationFailed, ResourceNotFound
    ),
    summary="Change url, events or enabled",
)
async def update_webhook_endpoint(
    endpoint_id: str,
    body: UpdateWebhookEndpoint,
    caller: CurrentCaller,
    request: Request,
    conn: Conn,
) -> Response:
    runtime = runtime_of(request)
    if body.url is not None:
        await service.check_url(
            body.url,
            caller.environment,
            runtime.webhook_resolver,
            sandbox_private=runtime.settings.sandbox_webhooks_private_allowed,
        )
    updated = await service.update_endpoint(conn, runtime.clock, caller, endpoint_id, body)
    return json_response(endpoint_body(updated))


@router.delete(
    BASE + "/{endpoint_id}",
    status_code=204,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound),
    summary="Delete a webhook endpoint with its deliveries",
)
async def delete_webhook_endpoint(
    endpoint_id: str, caller: CurrentCaller, conn: Conn, request: Request
) -> Response:
    await service.delete_endpoint(conn, runtime_of(request).clock, caller, endpoint_id)
    return Response(status_code=204)


@router.get(
    BASE + "/{endpoint_id}/deliveries",
    response_model=WebhookDeliveryList,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound),
    summary="The endpoint's deliveries, newest first",
    description="The same filters as /v1/admin/webhook-deliveries; `endpoint_id` is the path's.",
)
async def list_webhook_deliveries(
    endpoint_id: str,
    caller: CurrentCaller,
    conn: ReadConn,
    query: Annotated[EndpointDeliveryListQuery, Query()],
) -> Response:
    # Not validated again: the path's id is any string (an unknown one is 404), and re-validating
    # it against the query's endpoint_id bounds raised a pydantic error, a 500 (schemathesis found it).
    scoped = DeliveryListQuery.model_validate(query.model_dump(by_alias=True)).model_copy(
        update={"endpoint_id": endpoint_id}
    )
    page = await service.list_deliveries(conn, caller, scoped)
    return json_response(delivery_page_body(page))


@list_route(
    router,
    "/v1/admin/webhook-deliveries",
    model=WebhookDeliveryList,
    summary="All the application's deliveries, newest first",
    also=(ResourceNotFound,),
)
async def list_all_webhook_deliveries(
    caller: CurrentCaller, conn: ListConn, query: Annotated[DeliveryListQuery, Query()]
) -> Response:
    return json_response(delivery_page_body(await service.list_deliveries(conn, caller, query)))


@router.get(
    BASE + "/{endpoint_id}/deliveries/{delivery_id}",
    response_model=WebhookDeliveryDetail,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound),
    summary="One delivery with its attempt history, the body it sends and its payment intent",
)
async def get_webhook_delivery(
    endpoint_id: str, delivery_id: str, caller: CurrentCaller, conn: ReadConn
) -> Response:
    delivery, history = await service.get_delivery(conn, caller, endpoint_id, delivery_id)
    sent = await tools.sent_event(conn, delivery.event_id)
    body = delivery_with_history_body(delivery, history, sent.payload, sent.payment_intent_id)
    return json_response(body)


@router.post(
    BASE + "/{endpoint_id}/deliveries/{delivery_id}/retry",
    status_code=202,
    response_model=WebhookDeliveryResponse,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound, WebhookDeliveryAlreadySucceeded),
    summary="Attempt now, with a new 7-attempt schedule (history is kept)",
)
async def retry_webhook_delivery(
    endpoint_id: str, delivery_id: str, caller: CurrentCaller, request: Request, conn: Conn
) -> Response:
    runtime = runtime_of(request)
    retried = await service.retry_delivery(conn, runtime.clock, caller, endpoint_id, delivery_id)
    return json_response(delivery_body(retried), 202)


@router.post(
    BASE + "/{endpoint_id}/recover",
    response_model=RecoveredDeliveries,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound),
    summary="Restart every failed delivery of the endpoint since a time (idempotent)",
    description="EXHAUSTED deliveries created at or after `since` (with `include_failing`, "
    "also PENDING ones with failed attempts) get a new 7-attempt schedule, due at once.",
)
async def recover_webhook_deliveries(
    endpoint_id: str,
    body: RecoverDeliveries,
    caller: CurrentCaller,
    request: Request,
    conn: Conn,
) -> Response:
    runtime = runtime_of(request)
    recovered = await recover_deliveries(
        conn,
        runtime.clock,
        caller,
        endpoint_id=endpoint_id,
        since=body.since,
        include_failing=body.include_failing,
    )
    return json_response({"recovered": recovered})


@router.post(
    BASE + "/{endpoint_id}/test",
    status_code=202,
    response_model=WebhookDeliveryResponse,
    responses=problem_responses(AuthenticationFailed, ResourceNotFound, InvalidState, LimitExceeded),
    summary='Send a test event (webhook.test, "test": true) to this endpoint only',
    description="Queued like any notice (signed, retried, recorded); the answer is its delivery. "
    "A disabled endpoint is 409 INVALID_STATE; at most 10 of its test deliveries may be PENDING "
    "at once (one more is 409 LIMIT_EXCEEDED).",
)
async def send_webhook_test(
    endpoint_id: str, caller: CurrentCaller, request: Request, conn: Conn
) -> Response:
    delivery = await tools.send_test_event(conn, runtime_of(request).clock, caller, endpoint_id)
    return json_response(delivery_body(delivery), 202)


@router.post(
    BASE + "/{endpoint_id}/secret/rotate",
    response_model=CreatedWebhookEndpoint,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, ResourceNotFound),
    summary="Roll the endpoint's secret; the new one is shown only in this answer",
    description="For overlap_seconds (default 86400, at most 604800) the previous secret keeps "
    "signing beside the new one: every notice carries both signatures, so receivers verify "
    "with either while they switch.",
)
async def rotate_webhook_secret(
    endpoint_id: str,
    body: RotateWebhookSecret,
    caller: CurrentCaller,
    request: Request,
    conn: Conn,
) -> Response:
    runtime = runtime_of(request)
    rotated, secret = await tools.rotate_secret(
        conn, runtime.clock, runtime.cipher, caller, endpoint_id, overlap_seconds=body.overlap_seconds
    )
    return json_response(created_endpoint_body(rotated, secret))
