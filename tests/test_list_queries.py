"""Every list endpoint refuses unknown query parameters and malformed values with 400
VALIDATION_ERROR naming each parameter, and the OpenAPI document states the constraints."""

from __future__ import annotations

import httpx
import pytest

from tests.kit import Sandbox, assert_error

PAGED = {"cursor", "limit"}
DATED = PAGED | {"from", "to", "status"}
# Each list and the parameters it takes (path ids need not exist: the query is checked first).
LISTS: dict[str, set[str]] = {
    "/v1/payments": DATED,
    "/v1/payments/pay_x/refunds": set(),
    "/v1/events": PAGED | {"type", "payment_intent_id"},
    "/v1/payment-intents": DATED | {"provider", "merchant_account_id", "external_reference"},
    "/v1/admin/webhook-endpoints": PAGED,
    "/v1/admin/webhook-endpoints/whe_x/deliveries": DATED | {"event_type", "payment_intent_id"},
    "/v1/admin/webhook-deliveries": DATED | {"endpoint_id", "event_type", "payment_intent_id"},
    "/v1/admin/merchant-accounts/mrc_x/connectors": set(),
    "/v1/admin/merchant-accounts/mrc_x/routing/versions": PAGED,
    "/v1/admin/api-credentials": PAGED,
    "/v1/admin/merchant-accounts": set(),
}
BAD_VALUES = {
    "cursor": ["%21%21", ""],
    "limit": ["0", "101", "ten"],
    "status": ["BOGUS"],
    "from": ["yesterday"],
    "to": ["2026-13-01"],
    "type": ["payment.bogus"],
    "event_type": ["payment.bogus"],
    "payment_intent_id": ["x" * 41],
}
CASES = [(path, "payment_intent=payi_x", ["payment_intent"]) for path in LISTS] + [
    (path, f"{name}={value}", [name])
    for path, names in LISTS.items()
    for name in sorted(names)
    for value in BAD_VALUES.get(name, [])
]


async def errors_of(client: httpx.AsyncClient, app: Sandbox, url: str) -> list[str]:
    error = assert_error(await client.get(url, headers=app.headers), 400, "VALIDATION_ERROR")
    return sorted(e["field"] for e in error["details"]["errors"])


@pytest.mark.parametrize(("path", "query", "fields"), CASES)
async def test_unknown_or_malformed_parameters_are_400_naming_them(
    client: httpx.AsyncClient, sandbox: Sandbox, path: str, query: str, fields: list[str]
) -> None:
    assert await errors_of(client, sandbox, f"{path}?{query}") == fields


async def test_every_bad_parameter_is_named_at_once(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    url = "/v1/payments?limit=0&status=BOGUS&from=x&external_reference=order-1"
    assert await errors_of(client, sandbox, url) == [
        "external_reference",
        "from",
        "limit",
        "status",
    ]


async def test_the_events_typo_of_the_issue_is_refused(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    assert await errors_of(client, sandbox, "/v1/events?payment_intent=payi_x") == ["payment_intent"]
    ok = await client.get("/v1/events?payment_intent_id=payi_x", headers=sandbox.headers)
    assert ok.status_code == 200 and ok.json()["items"] == []


async def test_the_document_states_the_constraints(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    for path, names in LISTS.items():
        template = path.replace("pay_x", "{payment_id}").replace("whe_x", "{endpoint_id}")
        template = template.replace("mrc_x", "{merchant_id}")
        parameters = {
            p["name"]: p
            for p in document["paths"][template]["get"].get("parameters", [])
            if p["in"] == "query"
        }
        assert set(parameters) == names, path
        if "limit" in names:
            schema = parameters["limit"]["schema"]
            assert (schema["minimum"], schema["maximum"], schema["default"]) == (1, 100, 20)
        if "cursor" in names:
            cursor = parameters["cursor"]["schema"]
            assert any(b.get("pattern") for b in [cursor, *cursor.get("anyOf", [])]), path
        assert "400" in document["paths"][template]["get"]["responses"], path
    statuses = document["paths"]["/v1/payment-intents"]["get"]["parameters"]
    status = next(p for p in statuses if p["name"] == "status")
    [listed] = [b for b in status["schema"]["anyOf"] if b.get("type") == "array"]
    enum = document["components"]["schemas"][listed["items"]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert "REQUIRES_ACTION" in enum and "PROCESSING" in enum


# Each paged list's cursor: a position its pattern admits (no such item needs to exist) and the
# position of another list, which it refuses.
CURSORS = {
    "/v1/payments": ("pay_", "payi_"),
    "/v1/payment-intents": ("payi_", "pay_"),
    "/v1/admin/webhook-endpoints": ("whe_", "whd_"),
    "/v1/admin/webhook-endpoints/whe_x/deliveries": ("whd_", "whe_"),
    "/v1/admin/webhook-deliveries": ("whd_", "payi_"),
    "/v1/admin/api-credentials": ("key_", "whe_"),
}
SOME_ID = "0" * 28 + "z"


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize("path", sorted(CURSORS))
async def test_any_position_the_cursor_pattern_admits_is_a_valid_cursor(
    client: httpx.AsyncClient, sandbox: Sandbox, path: str
) -> None:
    own, other = CURSORS[path]
    document = (await client.get("/openapi.json")).json()
    template = path.replace("whe_x", "{endpoint_id}")
    [parameter] = [p for p in document["paths"][template]["get"]["parameters"] if p["name"] == "cursor"]
    [pattern] = [b["pattern"] for b in parameter["schema"]["anyOf"] if "pattern" in b]
    assert pattern == f"^{own}[0-9a-hjkmnp-tv-z]{{29}}$"
    response = await client.get(f"{path}?cursor={own}{SOME_ID}", headers=sandbox.headers)
    assert response.status_code == (404 if "whe_x" in path else 200), response.text
    assert await errors_of(client, sandbox, f"{path}?cursor={other}{SOME_ID}") == ["cursor"]


async def test_the_events_cursor_is_a_sequence_number(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    ok = await client.get("/v1/events?cursor=999999999999999999", headers=sandbox.headers)
    assert ok.status_code == 200 and ok.json() == {"items": [], "next_cursor": None}
    assert await errors_of(client, sandbox, "/v1/events?cursor=evt_1") == ["cursor"]
    assert await errors_of(client, sandbox, "/v1/events?cursor=9999999999999999999") == ["cursor"]
