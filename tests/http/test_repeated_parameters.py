"""A query parameter that takes one value, given twice, is a 400 VALIDATION_ERROR naming it, on
every route (payorch.http.single_values), through HTTP on SQLite and PostgreSQL: the exports, the
payments list, the intents list and a route with a plain query parameter. One that takes several
(the intents list's `status`) may repeat."""

from __future__ import annotations

import httpx
import pytest

from tests.kit import Sandbox, assert_error

RANGE = "from=2026-11-01&to=2026-11-02"


@pytest.mark.parametrize(
    ("path", "query", "repeated"),
    [
        ("/v1/exports/payments", f"{RANGE}&format=csv&format=jsonl", ["format"]),
        ("/v1/exports/balances", f"{RANGE}&from=2026-10-01", ["from"]),
        ("/v1/payments", "limit=5&limit=50", ["limit"]),
        ("/v1/payments", "status=AUTHORIZED&status=REFUNDED&to=2026-11-02&to=2026-11-03", ["status", "to"]),
        ("/v1/payment-intents", "provider=a&provider=b&status=FAILED", ["provider"]),
        ("/v1/payment-intents", "external_reference=x&external_reference=", ["external_reference"]),
        ("/v1/reports/reconciliation", "date=2026-11-01&date=2026-11-02", ["date"]),
    ],
)
async def test_a_single_valued_parameter_given_twice_is_400_naming_it(
    client: httpx.AsyncClient, sandbox: Sandbox, path: str, query: str, repeated: list[str]
) -> None:
    error = assert_error(
        await client.get(f"{path}?{query}", headers=sandbox.headers), 400, "VALIDATION_ERROR"
    )
    assert [problem["field"] for problem in error["details"]["errors"]] == repeated
    assert error["message"] == f"{repeated[0]}: Given 2 times; this parameter takes one value."


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/v1/exports/payments", f"{RANGE}&format=jsonl"),
        ("/v1/payments", "limit=5&status=AUTHORIZED"),
        # `status` of the intents list takes several values: one filter, both statuses.
        ("/v1/payment-intents", "status=FAILED&status=AUTHORIZED&limit=5"),
    ],
)
async def test_each_parameter_once_or_a_many_valued_one_repeated_is_answered(
    client: httpx.AsyncClient, sandbox: Sandbox, path: str, query: str
) -> None:
    response = await client.get(f"{path}?{query}", headers=sandbox.headers)
    assert response.status_code == 200, response.text
