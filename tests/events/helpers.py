"""Every event an application has, read through GET /v1/events and each validated against the
event catalogue (strictly: JSON, no coercion, no unknown field) and against the OpenAPI
document's ``webhooks`` entry for its type."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema_rs
import orjson

from payorch.events.catalogue import payload_of
from tests.kit import Sandbox


async def checked_events(client: httpx.AsyncClient, sandbox: Sandbox) -> list[dict[str, Any]]:
    """The application's events, newest first, each checked (an assertion fails on the first
    that does not match)."""
    document = (await client.get("/openapi.json")).json()
    found: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 100}
    while True:
        page = await client.get("/v1/events", params=params, headers=sandbox.headers)
        assert page.status_code == 200, page.text
        found += page.json()["items"]
        if page.json()["next_cursor"] is None:
            break
        params["cursor"] = page.json()["next_cursor"]
    for event in found:
        payload_of(event["type"]).model_validate_json(orjson.dumps(event["data"]), strict=True)
        _check_against_the_document(document, event)
    return found


def _check_against_the_document(document: dict[str, Any], event: dict[str, Any]) -> None:
    """The event's body against its ``webhooks`` entry (refs resolve within the document)."""
    entry = document["webhooks"][event["type"]]["post"]
    ref = entry["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    validator = jsonschema_rs.Draft202012Validator({**document, "$ref": ref})
    errors = [error.message for error in validator.iter_errors(event)]
    assert not errors, (event["type"], errors)
