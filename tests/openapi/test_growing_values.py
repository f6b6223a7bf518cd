"""Values documented to grow (docs/api.md, "Values that grow") are open strings in every schema
an answer or a notice uses, with their known values listed; requests keep their enums. Walks
/openapi.json itself (SQLite and PostgreSQL serve the same document)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

# docs/api.md's list, written here again: a field that leaves it must leave the docs too.
GROWS = {
    "code",
    "type",
    "event_type",
    "failure_reason",
    "disabled_reason",
    "reason",
    "kind",
    "strategy",
    "default",
    "provider",
    "priority",
    "requested_provider",
}
PREFIX = "#/components/schemas/"


def _answer_roots(document: dict[str, Any]) -> Iterator[object]:
    for path_item in document["paths"].values():
        for operation in path_item.values():
            yield operation.get("responses", {})
    for path_item in document["webhooks"].values():
        yield path_item["post"]["requestBody"]


def _enums_that_grow(document: dict[str, Any]) -> list[str]:
    """Every property on the list, in a schema an answer reaches, that is (or refers to) an enum."""
    schemas = document["components"]["schemas"]
    found: list[str] = []
    seen: set[str] = set()

    def closed(schema: object) -> bool:
        if isinstance(schema, list):
            return any(closed(item) for item in schema)
        if not isinstance(schema, dict):
            return False
        ref = schema.get("$ref", "")
        if ref and "enum" in schemas[ref.removeprefix(PREFIX)]:
            return True
        return "enum" in schema or any(closed(schema.get(k)) for k in ("anyOf", "oneOf", "items"))

    def walk(node: object, where: str) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, where)
            return
        if not isinstance(node, dict):
            return
        ref = node.get("$ref", "")
        if ref.startswith(PREFIX) and ref not in seen:
            seen.add(ref)
            walk(schemas[ref.removeprefix(PREFIX)], ref.removeprefix(PREFIX))
        for name, schema in node.get("properties", {}).items():
            if name in GROWS and closed(schema):
                found.append(f"{where}.{name}")
        for value in node.values():
            walk(value, where)

    for root in _answer_roots(document):
        walk(root, "answer")
    return found


async def test_no_answer_states_a_value_that_grows_as_an_enum(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    assert _enums_that_grow(document) == []
    schemas = document["components"]["schemas"]
    code = schemas["LastPaymentError"]["properties"]["code"]
    assert code["type"] == "string" and "Known codes: declined, insufficient_funds" in code["description"]
    assert code["examples"] == ["declined"]
    # A routing program's providers: open in the version answered, closed in the one sent.
    answered = schemas["RoutingVersionResponse"]["properties"]["rules"]["items"]["$ref"]
    assert answered == f"{PREFIX}RuleAnswer"
    assert "enum" not in schemas["ShareAnswer"]["properties"]["provider"]
    assert "enum" in schemas["Share"]["properties"]["provider"]
    # Statuses stay closed; requests keep their enums.
    assert "enum" in schemas["IntentStatus"]
    assert "provider_b_redirect_get" in schemas["CreatePaymentIntent"]["properties"]["provider"]["enum"]
    events = schemas["CreateWebhookEndpoint"]["properties"]["events"]["anyOf"][0]["items"]
    assert "payment.authorized" in events["enum"]


def test_the_walk_finds_an_enum_that_grows() -> None:
    # The check itself can fail: an answer's error code as an enum is found.
    document = {
        "paths": {"/x": {"get": {"responses": {"400": {"$ref": f"{PREFIX}Body"}}}}},
        "webhooks": {},
        "components": {
            "schemas": {
                "Body": {"properties": {"code": {"$ref": f"{PREFIX}Code"}, "status": {"enum": ["A"]}}},
                "Code": {"enum": ["NOT_FOUND"], "type": "string"},
            }
        },
    }
    assert _enums_that_grow(document) == ["Body.code"]
