"""An explicit provider that cannot charge the intent's currency is refused when the intent is
created (422 CURRENCY_NOT_SUPPORTED, nothing written), not only at its checkout; SQLite and
PostgreSQL (whose create is one statement)."""

from __future__ import annotations

import httpx
import pytest

from payorch.runtime import Runtime
from tests.kit import Sandbox, intent_body, mock_sandbox, new_application
from tests.providers.helpers import RETURN_URL, A, B


def body(sandbox: Sandbox, provider: str, currency: str, **changes: object) -> dict[str, object]:
    return intent_body(
        sandbox, amount=1000, currency=currency, return_url=RETURN_URL, provider=provider, **changes
    )


@pytest.mark.parametrize("key", [None, "create-1"])
async def test_refused_at_create(client: httpx.AsyncClient, runtime: Runtime, key: str | None) -> None:
    sandbox = await mock_sandbox(runtime)
    headers = {**sandbox.headers, **({"Idempotency-Key": key} if key else {})}
    response = await client.post("/v1/payment-intents", json=body(sandbox, A, "USD"), headers=headers)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "CURRENCY_NOT_SUPPORTED"
    assert error["message"] == f"The provider {A} does not support USD; it takes CLP."
    assert error["details"] == {"provider": A, "currency": "USD", "supported_currencies": ["CLP"]}
    listed = await client.get("/v1/payment-intents", headers=sandbox.headers)
    assert listed.json()["items"] == []
    # The same request for a provider that charges USD, or for auto, is created.
    ok = await client.post("/v1/payment-intents", json=body(sandbox, B, "USD"), headers=sandbox.headers)
    assert ok.status_code == 201, ok.text


async def test_another_merchant_is_still_404_first(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await new_application(runtime)
    response = await client.post(
        "/v1/payment-intents",
        json=body(sandbox, A, "USD", merchant_account_id="mrc_not_mine"),
        headers=sandbox.headers,
    )
    assert response.status_code == 404
