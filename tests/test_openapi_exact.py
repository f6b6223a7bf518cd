"""What the all-checks schemathesis run (tests/test_openapi_all_checks.py) asked of the service,
each shown directly through HTTP on SQLite and PostgreSQL: integers sent as 33.0, optional bodies
that refuse null, the document's enums and URL pattern enforced as stated."""

from __future__ import annotations

import re

import httpx
import pytest

from payorch.http.schemas import HTTP_URL_PATTERN
from payorch.providers.registry import PROVIDER_IDS, REGISTRATIONS
from tests.kit import Sandbox, assert_error, create_intent, intent_body


async def test_an_integer_field_takes_a_number_with_a_zero_fraction(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    created = await client.post(
        "/v1/payment-intents", json=intent_body(sandbox, amount=1500.0), headers=sandbox.headers
    )
    assert created.status_code == 201, created.text
    assert created.json()["amount"] == 1500 and isinstance(created.json()["amount"], int)
    refused = await client.post(
        "/v1/payment-intents", json=intent_body(sandbox, amount=1500.5), headers=sandbox.headers
    )
    assert_error(refused, 400, "VALIDATION_ERROR")
    assert [e["field"] for e in refused.json()["error"]["details"]["errors"]] == ["amount"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/payment-intents/{id}/cancel",
        "/v1/payment-intents/{id}/checkout",
        "/v1/admin/api-credentials",
    ],
)
async def test_an_optional_body_refuses_json_null(
    client: httpx.AsyncClient, sandbox: Sandbox, path: str
) -> None:
    intent = await create_intent(client, sandbox)
    url = path.format(id=intent["id"])
    headers = {**sandbox.headers, "Content-Type": "application/json"}
    response = await client.post(url, content=b"null", headers=headers)
    assert_error(response, 400, "VALIDATION_ERROR")
    [problem] = response.json()["error"]["details"]["errors"]
    assert problem["field"] == "body" and problem["message"].endswith("or no body at all")
    after = await client.get(f"/v1/payment-intents/{intent['id']}", headers=sandbox.headers)
    assert after.json()["status"] == "CREATED"  # nothing moved


async def test_the_document_shows_optional_bodies_as_objects_only(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for media in operation.get("requestBody", {}).get("content", {}).values():
                assert {"type": "null"} not in media["schema"].get("anyOf", []), (method, path)


@pytest.mark.parametrize(
    ("return_url", "valid"),
    [
        ("https://shop.example/return?x=1#top", True),
        ("HTTP://shop.example:8443/", True),
        ("", False),
        ("shop.example/return", False),
        ("https://shop.example/ré", False),
        ("https://user@shop.example/", False),
    ],
)
async def test_return_url_is_refused_exactly_when_the_documented_pattern_refuses_it(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    return_url: str,
    valid: bool,
) -> None:
    document = (await client.get("/openapi.json")).json()
    stated = document["components"]["schemas"]["CreatePaymentIntent"]["properties"]["return_url"]
    assert stated["pattern"] == HTTP_URL_PATTERN
    assert bool(re.match(HTTP_URL_PATTERN, return_url)) is valid
    response = await client.post(
        "/v1/payment-intents",
        json=intent_body(sandbox, return_url=return_url),
        headers=sandbox.headers,
    )
    assert response.status_code == (201 if valid else 400), response.text


async def test_the_document_states_the_enums_the_service_checks(client: httpx.AsyncClient) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    create = schemas["CreatePaymentIntent"]["properties"]
    assert "CLP" in create["currency"]["enum"] and "XAU" not in create["currency"]["enum"]
    # Every registered provider, in the registry's order.
    assert create["provider"]["enum"] == ["auto", *PROVIDER_IDS]
    names = create["metadata"]["propertyNames"]
    assert (names["minLength"], names["maxLength"], names["pattern"]) == (1, 40, "^[^\\x00]*$")
    events = schemas["CreateWebhookEndpoint"]["properties"]["events"]["anyOf"][0]["items"]
    assert "payment.authorized" in events["enum"]


async def test_an_endpoint_id_longer_than_any_id_is_a_404_not_a_500(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    # Found by the all-checks run: the path's id was validated against the query's bounds.
    response = await client.get(
        f"/v1/admin/webhook-endpoints/{'x' * 100}/deliveries", headers=sandbox.headers
    )
    assert_error(response, 404, "RESOURCE_NOT_FOUND")


async def test_the_settle_control_is_described_for_every_registered_provider(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()
    operation = document["paths"]["/simulator/controls/settle"]["post"]
    schemas = document["components"]["schemas"]
    references = schemas["Settled"]["properties"]["references"]["description"]
    for registration in REGISTRATIONS:
        assert registration.display_name in operation["description"]
        assert registration.display_name in references
    # No count of providers written into the text.
    assert "both" not in schemas["SettleRequest"]["properties"]["provider"]["description"]


async def test_the_exports_are_documented_with_their_columns_and_formats(
    client: httpx.AsyncClient,
) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    for kind, first_column in (
        ("payments", "payment_id"),
        ("refunds", "refund_id"),
        ("disputes", "payment_id"),
        ("balances", "day"),
        ("payment_links", "payment_link_id"),
    ):
        operation = paths[f"/v1/exports/{kind}"]["get"]
        parameters = {p["name"]: p for p in operation["parameters"]}
        assert set(parameters) == {"from", "to", "format"}
        assert parameters["from"]["required"] and parameters["to"]["required"]
        assert parameters["format"]["schema"]["enum"] == ["csv", "jsonl"]
        ok = operation["responses"]["200"]
        assert set(ok["content"]) == {"text/csv", "application/x-ndjson"}
        assert ok["description"].startswith(f"Columns, in order: {first_column}, ")
        assert set(operation["responses"]) == {"200", "400", "401", "403", "409", "500"}
        assert operation["x-payorch-scope"] == "exports:read"


async def test_the_document_states_the_reconciliation_reports(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    operations = document["paths"]["/v1/reports/reconciliation"]
    assert "202" in operations["post"]["responses"] and "200" in operations["get"]["responses"]
    [day] = [p for p in operations["get"]["parameters"] if p["name"] == "date"]
    assert day["required"] and day["schema"]["pattern"] == r"^\d{4}-\d{2}-\d{2}$"
    events = document["components"]["schemas"]["CreateWebhookEndpoint"]["properties"]["events"]
    assert "reconciliation.discrepancy" in events["anyOf"][0]["items"]["enum"]
    resolve = document["paths"]["/v1/reports/reconciliation/findings/{finding_id}/resolve"]["post"]
    assert set(resolve["responses"]) >= {"200", "400", "401", "404", "409"}
    note = document["components"]["schemas"]["ResolveRequest"]["properties"]["note"]
    assert (note["minLength"], note["maxLength"]) == (1, 1000)


async def test_the_document_states_routing(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    base = "/v1/admin/merchant-accounts/{merchant_id}/routing"
    paths = document["paths"]
    assert set(paths[base]) == {"get", "put"}
    assert set(paths[base + "/versions"]) == {"get", "post"}  # post: a draft unless activate
    assert "201" in paths[base + "/versions"]["post"]["responses"]
    assert set(paths[base + "/versions/{number}/activate"]) == {"post"}
    assert set(paths[base + "/evaluate"]) == {"post"}
    assert "422" in paths[base + "/evaluate"]["post"]["responses"]
    schemas = document["components"]["schemas"]
    assert schemas["NewRoutingVersion"]["properties"]["activate"]["default"] is False
    assert "version" in schemas["EvaluateRouting"]["properties"]
    metadata = schemas["Conditions"]["properties"]["metadata"]  # an intent's key lengths
    assert (metadata["propertyNames"]["minLength"], metadata["propertyNames"]["maxLength"]) == (1, 40)
    strategy = schemas["RoutingRecordResponse"]["properties"]["strategy"]  # grows: an open string
    assert "Known strategies: explicit, priority, rule, split, success_rate." in strategy["description"]
    assert "routing" in schemas["CheckoutResponse"]["required"]
    assert "routing" in schemas["PaymentIntentResponse"]["properties"]
