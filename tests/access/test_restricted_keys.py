"""A restricted key over the whole API, generated from the OpenAPI document's scopes (so no
operation is forgotten), on SQLite and PostgreSQL: for each operation, a key holding every scope
but the one it states is refused 403 FORBIDDEN naming that scope, and nothing changes in any
table; a key holding just that scope is not refused for its scopes (a 400 or 404 for the test's
bodies and ids is fine)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select

from payorch.access.scopes import SCOPES
from payorch.db.tables import metadata
from payorch.providers.registry import PROVIDER_IDS
from payorch.runtime import Runtime
from tests.kit import Sandbox, assert_error, authorized_payment, create_endpoint, create_intent, intent_body

pytestmark = pytest.mark.settings(rate_limit="100000/second", max_api_keys=500)

KEYS = "/v1/admin/api-credentials"


def scoped_operations(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(method, path, scope) of every operation that takes a key; each must state its scope."""
    found = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if operation["security"] == []:
                continue
            scope = operation.get("x-payorch-scope")
            assert scope in SCOPES, f"{method.upper()} {path} states no known scope: {scope}"
            assert operation["security"] == [{"ApiKey": [scope]}], (method, path)
            assert "FORBIDDEN" in operation["responses"]["403"]["description"], (method, path)
            found.append((method.upper(), path, scope))
    return found


async def new_key(client: httpx.AsyncClient, sandbox: Sandbox, scopes: list[str]) -> str:
    answer = await client.post(KEYS, json={"scopes": scopes}, headers=sandbox.headers)
    assert answer.status_code == 201, answer.text
    assert answer.json()["scopes"] == [s for s in SCOPES if s in scopes]
    key: str = answer.json()["api_key"]
    return key


async def snapshot(runtime: Runtime) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (a key's last use aside: using a key writes it)."""
    rows = {}
    async with runtime.database.reading() as conn:
        for table in metadata.sorted_tables:
            columns = [c for c in table.c if (table.name, c.name) != ("api_credentials", "last_used_at")]
            found = (await conn.execute(select(*columns))).all()
            rows[table.name] = sorted(tuple(map(repr, row)) for row in found)
    return rows


async def test_every_operation_refuses_a_key_without_its_scope_and_admits_one_with_it(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    document = (await client.get("/openapi.json")).json()
    operations = scoped_operations(document)
    assert len(operations) > 50  # the whole API, not a part of it
    # Real objects, so that an operation let through by mistake would change something.
    intent = await create_intent(client, sandbox)
    paid = await authorized_payment(runtime, sandbox)
    endpoint = await create_endpoint(client, sandbox, "https://hooks.example/payorch")
    spare = (await client.post(KEYS, json={"name": "spare"}, headers=sandbox.headers)).json()
    person = {"email": "scoped@example.com", "role": "viewer"}
    user = (await client.post("/v1/admin/users", json=person, headers=sandbox.headers)).json()
    link_fields = {"merchant_account_id": sandbox.merchant_account_id, "amount": 1500, "currency": "CLP"}
    link_body = {**link_fields, "description": "scoped"}
    link = (await client.post("/v1/payment-links", json=link_body, headers=sandbox.headers)).json()
    ids = {
        "payment_link_id": link["id"],
        "payment_intent_id": intent["id"],
        "payment_id": paid.payment_id,
        "merchant_id": sandbox.merchant_account_id,
        "endpoint_id": endpoint.id,
        "credential_id": spare["id"],
        "user_id": user["id"],
        "provider": PROVIDER_IDS[0],
        "number": "1",
        "config_id": "mca_0000000000000000000000",
        "delivery_id": "whd_0000000000000000000000",
        "finding_id": "rcf_0000000000000000000000",
    }
    bodies: dict[tuple[str, str], Any] = {
        ("POST", "/v1/payment-intents"): intent_body(sandbox, external_reference="order-scoped"),
        ("POST", "/v1/payments/{payment_id}/refunds"): {"amount": 100},
        ("POST", "/v1/payment-links"): link_body,
        ("POST", "/v1/admin/webhook-endpoints"): {"url": "https://hooks.example/other"},
        ("PATCH", "/v1/admin/webhook-endpoints/{endpoint_id}"): {"enabled": False},
        ("POST", "/simulator/controls/faults"): {"provider": PROVIDER_IDS[0], "mode": "error"},
    }
    scopes = sorted({scope for _m, _p, scope in operations})
    without = {s: await new_key(client, sandbox, [o for o in SCOPES if o != s]) for s in scopes}
    only = {s: await new_key(client, sandbox, [s]) for s in scopes}

    async def call(method: str, path: str, key: str, scope: str) -> httpx.Response:
        body = bodies.get((method, path), {})
        if (method, path) == ("POST", KEYS):
            body = {"scopes": [scope]}  # a key may grant only what its creator holds
        url = path.format(**ids)
        headers = {"Authorization": f"Bearer {key}"}
        if method in ("GET", "DELETE"):
            return await client.request(method, url, headers=headers)
        return await client.request(method, url, json=body, headers=headers)

    before = await snapshot(runtime)
    for method, path, scope in operations:
        refused = await call(method, path, without[scope], scope)
        error = assert_error(refused, 403, "FORBIDDEN")
        assert error["details"] == {"required_scope": scope}, (method, path)
        assert scope in error["message"]
    assert await snapshot(runtime) == before, "a refused operation changed something"

    for method, path, scope in operations:
        admitted = await call(method, path, only[scope], scope)
        if admitted.status_code == 403:
            details = admitted.json()["error"]["details"]
            assert "required_scope" not in details, (method, path, admitted.text)
        assert admitted.status_code != 401, (method, path, admitted.text)
