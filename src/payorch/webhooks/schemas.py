"""Request and response models of webhook endpoints and deliveries."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from payorch.clock import isoformat
from payorch.events.types import ALL_EVENT_TYPES, EventType
from payorch.http.listing import CreatedRangeQuery, Instant, PageQuery, id_cursor
from payorch.http.schemas import WEBHOOK_URL_PATTERN, WHOLE_NUMBER
from payorch.jsontypes import json_fields
from payorch.pagination import Page
from payorch.webhooks.failures import REASONS, FailureReason
from payorch.webhooks.records import Delivery, DeliveryAttempt, WebhookEndpoint

# Event types as the document's enum; _check_events enforces the same set in its own words.
EventTypeName = Annotated[str, Field(json_schema_extra={"enum": sorted(ALL_EVENT_TYPES)})]
EventList = Annotated[
    list[EventTypeName],
    Field(
        max_length=len(ALL_EVENT_TYPES),
        description="Event types to receive; empty or absent means every event.",
        examples=[["payment.authorized", "payment.failed"]],
    ),
]


def _check_events(value: list[str] | None) -> list[str] | None:
    if value is None:
        return None
    unknown = [v for v in value if v not in ALL_EVENT_TYPES]
    if unknown:
        raise ValueError(f"unknown event types: {', '.join(unknown)}")
    return sorted(set(value), key=value.index)


ORDERED_DESCRIPTION = (
    "true: for one payment intent, a notice is not attempted while an earlier one to this endpoint "
    "is still PENDING (in event order). false (default): at least once, in any order."
)


class EndpointDeliveryListQuery(CreatedRangeQuery):
    """Filters of one endpoint's deliveries."""

    cursor: Annotated[str | None, id_cursor("whd")] = None

    status: Annotated[
        list[Literal["PENDING", "SUCCEEDED", "EXHAUSTED"]] | None,
        Field(description="Repeat the parameter for several statuses."),
    ] = None
    event_type: EventType | None = None
    payment_intent_id: Annotated[str | None, Field(max_length=40)] = None


class DeliveryListQuery(EndpointDeliveryListQuery):
    """Filters of the application's deliveries: those of one endpoint's, and the endpoint."""

    endpoint_id: Annotated[str | None, Field(max_length=40)] = None


class EndpointListQuery(PageQuery):
    cursor: Annotated[str | None, id_cursor("whe")] = None


class CreateWebhookEndpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    url: Annotated[
        str,
        Field(
            max_length=2048,
            json_schema_extra={"format": "uri", "pattern": WEBHOOK_URL_PATTERN},
            examples=["https://shop.example/webhooks/pay"],
        ),
    ]
    events: EventList | None = None
    ordered: Annotated[bool, Field(description=ORDERED_DESCRIPTION)] = False

    _events = field_validator("events")(_check_events)


class UpdateWebhookEndpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    url: (
        Annotated[
            str, Field(max_length=2048, json_schema_extra={"format": "uri", "pattern": WEBHOOK_URL_PATTERN})
        ]
        | None
    ) = None
    events: EventList | None = None
    enabled: bool | None = None
    ordered: Annotated[bool | None, Field(description=ORDERED_DESCRIPTION)] = None

    _events = field_validator("events")(_check_events)


class RecoverDeliveries(BaseModel):
    model_config = ConfigDict(extra="forbid")

    since: Annotated[
        Instant,
        Field(
            description="Deliveries created at or after this time; an ISO 8601 timestamp or a "
            "date (UTC midnight).",
            examples=["2026-11-20T00:00:00Z"],
        ),
    ]
    include_failing: Annotated[
        bool,
        Field(
            strict=True,
            description="Also restart PENDING deliveries whose current schedule has failed "
            "attempts (an attempt in flight is left alone).",
        ),
    ] = False


class RecoveredDeliveries(BaseModel):
    recovered: int = Field(description="How many deliveries got a new 7-attempt schedule.")


class WebhookEndpointResponse(BaseModel):
    id: str
    application_id: str
    url: str
    enabled: bool
    events: list[str]
    ordered: bool
    created_at: str
    disabled_reason: Literal["failing", "manual"] | None = Field(
        description="Why the endpoint is disabled: `failing` (payorch disabled it: every attempt "
        "failed for PAYORCH_WEBHOOK_DISABLE_AFTER_SECONDS) or `manual`; null while enabled."
    )
    disabled_at: str | None = Field(description="Since when it is disabled; null while enabled.")
    previous_secret_expires_at: str | None = Field(
        description="After a secret rotation: until then the previous secret still signs beside "
        "the current one (a past time: it no longer does); null if never rotated with an overlap."
    )


class WebhookEndpointWithSecret(WebhookEndpointResponse):
    secret: str = Field(description="64 hexadecimal characters; returned only on creation and on rotation.")


class RotateWebhookSecret(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    overlap_seconds: Annotated[
        int,
        Field(
            ge=0,
            le=7 * 24 * 3600,
            description="How long the previous secret keeps signing beside the new one (default "
            "86400, at most 7 days; 0: it stops at once).",
        ),
        WHOLE_NUMBER,
    ] = 24 * 3600


class CreatedWebhookEndpoint(BaseModel):
    success: Literal[True]
    data: WebhookEndpointWithSecret


class WebhookEndpointList(BaseModel):
    items: list[WebhookEndpointResponse]
    next_cursor: str | None


class WebhookDeliveryResponse(BaseModel):
    id: str
    endpoint_id: str
    event_id: str
    event_type: EventType
    status: Literal["PENDING", "SUCCEEDED", "EXHAUSTED"]
    attempts: int = Field(description="Attempts made over the delivery's whole history.")
    next_attempt_at: str | None
    last_attempt_at: str | None
    response_status: int | None
    response_excerpt: str | None = Field(description="At most 1024 characters of the answer.")
    error: str | None = Field(
        description="Why the last attempt failed: timeout, network_error, unexpected_status, "
        "url_not_allowed; null after a success."
    )
    failure_reason: FailureReason | None = Field(
        description="What happened, more exactly than error: " + ", ".join(REASONS) + "."
    )
    failure_message: str | None = Field(
        description="A short sentence, e.g. 'no complete answer within 5 s' or 'HTTP 503: not a 2xx answer'."
    )
    created_at: str


class WebhookDeliveryAttempt(BaseModel):
    number: int
    at: str
    duration_ms: int
    response_status: int | None
    response_excerpt: str | None
    error: str | None
    failure_reason: FailureReason | None
    failure_message: str | None


class WebhookDeliveryDetail(WebhookDeliveryResponse):
    attempt_history: list[WebhookDeliveryAttempt] = Field(description="Oldest attempt first.")
    payload: str = Field(description="The exact body sent (the event, as GET /v1/events lists it).")
    payment_intent_id: str | None = Field(
        description="The payment intent the event is about; null for events about an endpoint."
    )


class WebhookDeliveryList(BaseModel):
    items: list[WebhookDeliveryResponse]
    next_cursor: str | None


_ENDPOINT_FIELDS = (
    "id",
    "application_id",
    "url",
    "enabled",
    "events",
    "ordered",
    "created_at",
    "disabled_reason",
    "disabled_at",
    "previous_secret_expires_at",
)
_DELIVERY_FIELDS = (
    "id",
    "endpoint_id",
    "event_id",
    "event_type",
    "status",
    "attempts",
    "next_attempt_at",
    "last_attempt_at",
    "response_status",
    "response_excerpt",
    "error",
    "failure_reason",
    "failure_message",
    "created_at",
)


def endpoint_body(endpoint: WebhookEndpoint) -> dict[str, object]:
    return json_fields(endpoint, _ENDPOINT_FIELDS)


def created_endpoint_body(endpoint: WebhookEndpoint, secret: str) -> dict[str, object]:
    return {"success": True, "data": {**endpoint_body(endpoint), "secret": secret}}


def delivery_body(delivery: Delivery) -> dict[str, object]:
    return json_fields(delivery, _DELIVERY_FIELDS)


def delivery_with_history_body(
    delivery: Delivery, history: list[DeliveryAttempt], payload: str, payment_intent_id: str | None
) -> dict[str, object]:
    body = delivery_body(delivery)
    body["payload"], body["payment_intent_id"] = payload, payment_intent_id
    body["attempt_history"] = [
        {
            "number": a.number,
            "at": isoformat(a.started_at),
            "duration_ms": a.duration_ms,
            "response_status": a.response_status,
            "response_excerpt": a.response_excerpt,
            "error": a.error,
            "failure_reason": a.failure_reason,
            "failure_message": a.failure_message,
        }
        for a in history
    ]
    return body


def endpoint_page_body(page: Page[WebhookEndpoint]) -> dict[str, object]:
    return {"items": [endpoint_body(e) for e in page.items], "next_cursor": page.next_cursor}


def delivery_page_body(page: Page[Delivery]) -> dict[str, object]:
    return {"items": [delivery_body(d) for d in page.items], "next_cursor": page.next_cursor}
