"""What /openapi.json states beyond FastAPI's defaults (payorch.http.openapi_terms), on SQLite and
PostgreSQL: the bearer scheme exactly where a key is asked for, operation ids named after the
endpoint functions, timestamps as date-time, statuses and error codes as enums; the answers
keep to those statements."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI

from payorch.http.openapi import install_openapi
from payorch.http.openapi_terms import error_codes
from payorch.http.routing import mount
from payorch.intents.states import IntentStatus
from tests.kit import Sandbox

OPEN_OPERATIONS = {
    "checkout_return_get",
    "checkout_return_post",
    "provider_notification",
    "healthz",
    "readyz",
    "metrics",
}


@pytest.fixture
async def document(client: httpx.AsyncClient) -> dict[str, Any]:
    answer = await client.get("/openapi.json")
    assert answer.status_code == 200
    body: dict[str, Any] = answer.json()
    return body


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield method.upper(), path, operation


def properties(node: object, name: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (property name, schema) pair anywhere under ``node``."""
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            yield key, value
        for key, value in node.items():
            yield from properties(value, key)
    elif isinstance(node, list):
        for value in node:
            yield from properties(value, name)


async def test_the_bearer_scheme_is_on_every_operation_that_asks_for_a_key(
    document: dict[str, Any],
) -> None:
    scheme = document["components"]["securitySchemes"]["ApiKey"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    assert "pay_sb_" in scheme["bearerFormat"] and "SANDBOX" in scheme["description"]
    open_ids = set()
    for method, path, operation in operations(document):
        if operation["security"] == []:
            open_ids.add(operation["operationId"])
            assert "401" not in operation["responses"], (method, path)
        else:
            # The scope it needs (payorch.access.operations; tests/access check each).
            scope = operation["x-payorch-scope"]
            assert operation["security"] == [{"ApiKey": [scope]}], (method, path)
            assert "AUTHENTICATION_FAILED" in operation["responses"]["401"]["description"]
            assert "FORBIDDEN" in operation["responses"]["403"]["description"]
    assert open_ids == OPEN_OPERATIONS


async def test_operation_ids_are_the_endpoints_names_and_unique(document: dict[str, Any]) -> None:
    ids = {(method, path): op["operationId"] for method, path, op in operations(document)}
    assert len(set(ids.values())) == len(ids)
    assert ids[("POST", "/v1/payment-intents")] == "create_payment_intent"
    assert ids[("GET", "/v1/payment-intents/{payment_intent_id}")] == "get_payment_intent"
    assert ids[("POST", "/v1/payment-intents/{payment_intent_id}/checkout")] == "request_checkout"
    assert ids[("GET", "/v1/admin/webhook-deliveries")] == "list_all_webhook_deliveries"
    assert ids[("POST", "/simulator/controls/settle")] == "settle"
    for operation_id in ids.values():  # FastAPI's default appended the path and the method
        assert "_v1_" not in operation_id and "__" not in operation_id, ids
    # The dashboard's and the simulator's pages are not API operations.
    assert not [p for _, p in ids if p.startswith("/dashboard") or p.startswith("/simulator/provider")]


def test_two_operations_of_one_name_are_refused() -> None:
    first, second = APIRouter(), APIRouter()

    @first.get("/a")
    async def read() -> dict[str, str]:
        return {}

    @second.get("/b")  # another module's function of the same name
    async def read() -> dict[str, str]:  # noqa: F811
        return {}

    app = FastAPI()
    install_openapi(app)
    mount(app, first, second)
    with pytest.raises(RuntimeError, match="operation id read names"):
        app.openapi()
    nested = FastAPI()  # an included router's routes are not the app's own: not named, refused
    install_openapi(nested)
    nested.include_router(first)
    with pytest.raises(RuntimeError, match="/a: not on a route of the app's own"):
        nested.openapi()


async def test_timestamps_are_date_time(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    stamped = []
    for name, schema in properties(schemas):
        if name == "at" or name.endswith("_at"):
            strings = [b for b in [schema, *schema.get("anyOf", [])] if b.get("type") == "string"]
            assert strings and all(b["format"] == "date-time" for b in strings), (name, schema)
            stamped.append(name)
    assert {"created_at", "expires_at", "authorized_at", "revoked_at", "at"} <= set(stamped)


async def test_statuses_are_enums_and_codes_list_their_known_values(document: dict[str, Any]) -> None:
    # Statuses are closed sets; codes grow, so answers state them as strings with the known
    # values listed (tests/openapi/test_growing_values.py).
    schemas = document["components"]["schemas"]
    for name, schema in properties(schemas):
        if name in ("status", "environment"):
            ref = schema.get("$ref", "")
            stated = schemas[ref.rsplit("/", 1)[1]] if ref else schema
            assert "enum" in stated or "const" in stated, (name, schema)
    assert schemas["IntentStatus"]["enum"] == [s.value for s in IntentStatus]
    assert schemas["PaymentIntentResponse"]["properties"]["status"] == {
        "$ref": "#/components/schemas/IntentStatus"
    }
    assert schemas["CheckoutResponse"]["properties"]["status"] == {
        "$ref": "#/components/schemas/IntentStatus"
    }
    assert schemas["PaymentResponse"]["properties"]["status"]["enum"] == [
        "REQUIRES_CAPTURE",
        "AUTHORIZED",
        "PARTIALLY_REFUNDED",
        "REFUNDED",
        "VOIDED",
        "EXPIRED",
    ]
    assert schemas["RefundResponse"]["properties"]["status"]["enum"] == ["PENDING", "SUCCEEDED", "FAILED"]
    for answer, field in (("TimelineEntryResponse", "type"), ("WebhookDeliveryResponse", "event_type")):
        stated = schemas[answer]["properties"][field]
        assert stated["type"] == "string" and "payment.authorized" in stated["description"]
    code = schemas["ErrorBody"]["properties"]["code"]
    assert "enum" not in code and code["type"] == "string"
    assert f"Known codes: {', '.join(error_codes())}." in code["description"]
    assert {"VALIDATION_ERROR", "NOT_READY", "INTERNAL_ERROR"} <= set(error_codes())


async def test_answers_keep_to_the_stated_terms(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], document: dict[str, Any]
) -> None:
    created = await client.post("/v1/payment-intents", json=intent_body, headers=sandbox.headers)
    body = created.json()
    assert (
        created.status_code == 201
        and body["status"] in document["components"]["schemas"]["IntentStatus"]["enum"]
    )
    for stamp in [body["created_at"], *(entry["at"] for entry in body["timeline"])]:
        assert datetime.fromisoformat(stamp).tzinfo is not None and stamp.endswith("Z")
    refused = await client.get("/v1/payment-intents/payi_x")
    assert refused.json()["error"]["code"] in error_codes()
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
