"""The OpenAPI document's ``webhooks`` section (OpenAPI 3.1): every event of the catalogue as the
POST a webhook endpoint receives, its body the envelope ``{id, type, created_at, data}`` with the
event's payload model as ``data`` (docs/api.md, "Outgoing notices")."""

from __future__ import annotations

from typing import Any

from payorch.events.catalogue import CATALOGUE, TEST_EVENTS, EventData

_REF = "#/components/schemas/{model}"
_RECEIVED = {
    "2XX": {"description": "Received: a 2xx within the timeout ends the delivery; anything else is retried."}
}


def add_webhooks(document: dict[str, Any]) -> dict[str, Any]:
    """Add each event's envelope and payload to the document's components, and the event to
    ``webhooks`` (a name already used for another schema is refused)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    webhooks = document.setdefault("webhooks", {})
    for event_type, model in CATALOGUE.items():
        envelope = f"{model.__name__}Event"
        _add(schemas, model.__name__, _payload_schema(model, schemas))
        _add(schemas, envelope, _envelope(event_type, model))
        body = {"application/json": {"schema": {"$ref": _REF.format(model=envelope)}}}
        webhooks[event_type] = {
            "post": {
                "summary": event_type,
                "description": model.DESCRIPTION,
                "requestBody": {"required": True, "content": body},
                "responses": _RECEIVED,
            }
        }
    return document


def _payload_schema(model: type[EventData], schemas: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template=_REF)
    for name, definition in schema.pop("$defs", {}).items():
        _add(schemas, name, definition)
    return schema


def _envelope(event_type: str, model: type[EventData]) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "id": {"type": "string", "description": "The event's id (evt_...): deduplicate by it."},
        "type": {"type": "string", "const": event_type},
        "created_at": {"type": "string", "format": "date-time"},
    }
    if event_type in TEST_EVENTS:
        properties["test"] = {"type": "boolean", "const": True}
    properties["data"] = {"$ref": _REF.format(model=model.__name__)}
    return {
        "title": f"{model.__name__}Event",
        "type": "object",
        "description": f"The body of a {event_type} notice (and of its item in GET /v1/events).",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _add(schemas: dict[str, Any], name: str, schema: dict[str, Any]) -> None:
    if schemas.setdefault(name, schema) != schema:
        raise RuntimeError(f"two schemas named {name} in the OpenAPI document")
