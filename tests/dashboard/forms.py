"""Dashboard forms the plain-HTTP dashboard tests post (the browser tests have tests/dashboard/helpers.py)."""

from __future__ import annotations

import httpx

from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, authorized_payment
from tests.providers.helpers import A, B
from tests.routing.helpers import C


def split_program(b_weight: int) -> dict[str, object]:
    """A routing program of two rules: USD to provider C, CLP split 70 to A and ``b_weight`` to B.
    The routing page refuses it unless the weights add up to 100 (``b_weight`` 30)."""
    shares = [{"provider": A, "weight": 70}, {"provider": B, "weight": b_weight}]
    return {
        "default": "success_rate",
        "rules": [
            {"name": "usd-to-c", "if": {"currency": ["USD"]}, "then": {"priority": [C]}},
            {"name": "spread", "if": {"currency": ["CLP"]}, "then": {"split": shares}},
        ],
    }


def routing_dry_run(csrf: str, amount: str, currency: str, version: str = "") -> dict[str, str]:
    """The routing page's dry-run form: ``amount`` as a person types it, by ``version`` ("" the
    active one), no metadata, ``auto``."""
    return {
        "csrf": csrf,
        "action": "evaluate",
        "amount": amount,
        "currency": currency,
        "metadata": "",
        "provider": "auto",
        "version": version,
    }


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


async def paid_intent(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    amount: int = 200_000,
    currency: str = "USD",
) -> tuple[str, str, str]:
    """A signed-in session and a paid intent (USD 2,000.00 unless told): (the refund form's URL,
    the intent's page, the CSRF token)."""
    paid = await authorized_payment(runtime, sandbox, amount=amount, currency=currency)
    csrf = await sign_in(client, sandbox)
    return f"/dashboard/payments/{paid.intent_id}/refunds", f"/dashboard/payments/{paid.intent_id}", csrf
