"""Dashboard forms the plain-HTTP dashboard tests post (the browser tests have tests/dashboard/helpers.py)."""

from __future__ import annotations

import httpx

from tests.kit import Sandbox


async def start_test_payment(
    client: httpx.AsyncClient,
    csrf: str,
    sandbox: Sandbox,
    *,
    amount: str,
    provider: str,
    currency: str = "CLP",
) -> httpx.Response:
    """The sandbox page's "Make a test payment" form, for ``sandbox``'s merchant."""
    return await client.post(
        "/dashboard/sandbox",
        data={
            "csrf": csrf,
            "merchant_account_id": sandbox.merchant_account_id,
            "amount": amount,
            "currency": currency,
            "provider": provider,
        },
    )
