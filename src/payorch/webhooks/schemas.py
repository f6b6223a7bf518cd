"""Request and response models of webhook endpoints and deliveries."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from payorch.clock import isoformat
from payorch.events.types import ALL_EVENT_TYPES

EventList = Annotated[
    list[str],
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


class CreateWebhookEndpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    url: Annotated[str, Field(max_length=2048, examples=["https://shop.example/webhooks/pay"])]
    events: EventList | None = None

    _events = field_validator("events")(_check_events)


class UpdateWebhookEndpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    url: Annotated[str, Field(max_length=2048)] | None = None
    events: EventList | None = None
    enabled: bool | None = None

    _events = field_validator("events")(_check_events)


class WebhookEndpoint(BaseModel):
    id: str
    application_id: str
    url: str
    enabled: bool
    events: list[str]
    created_at: str


class WebhookEndpointWithSecret(WebhookEndpoint):
    secret: str = Field(description="64 hexadecimal characters; returned only on creation.")


class CreatedWebhookEndpoint(BaseModel):
    success: Literal[True]
    data: WebhookEndpointWithSecret


class WebhookEndpointList(BaseModel):
    items: list[WebhookEndpoint]
    next_cursor: str | None


class WebhookDelivery(BaseModel):
    id: str
    endpoint_id: str
    event_id: str
    event_type: str
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
    created_at: str


class WebhookDeliveryList(BaseModel):
    items: list[WebhookDelivery]
    next_cursor: str | None


def endpoint_body(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "application_id": row.application_id,
        "url": row.url,
        "enabled": row.enabled,
        "events": list(row.events),
        "created_at": isoformat(row.created_at),
    }


def _ts(value: Any) -> str | None:
    return None if value is None else isoformat(value)


def delivery_body(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "endpoint_id": row.endpoint_id,
        "event_id": row.event_id,
        "event_type": row.event_type,
        "status": row.status,
        "attempts": row.attempts,
        "next_attempt_at": _ts(row.next_attempt_at),
        "last_attempt_at": _ts(row.last_attempt_at),
        "response_status": row.response_status,
        "response_excerpt": row.response_excerpt,
        "error": row.error,
        "created_at": isoformat(row.created_at),
    }
