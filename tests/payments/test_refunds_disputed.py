"""Refunds of a disputed payment, through HTTP with the real adapters and the simulator, on
SQLite and PostgreSQL: while a dispute is OPEN or after it was LOST a refund answers 409
PAYMENT_DISPUTED and nothing is reserved or sent; after a WON dispute what was left is
refundable; a dispute racing a refund is seen by every refund reserved after it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from payorch.providers.provider_d import PROVIDER_D
from payorch.runtime import Runtime
from tests.checkouts.helpers import _payment, settled
from tests.kit import Sandbox, assert_error, chosen_providers, mock_sandbox
from tests.providers.helpers import A, B, events_of, pay, read, start

C = "provider_c_redirect_get"


async def paid(client: httpx.AsyncClient, sandbox: Sandbox, provider: str) -> dict[str, Any]:
    intent, body = await start(client, sandbox, provider, amount=10_000)
    await pay(client, body, "approve")
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    return intent


async def refund(
    client: httpx.AsyncClient, sandbox: Sandbox, payment_id: str, key: str, **body: Any
) -> httpx.Response:
    return await client.post(
        f"/v1/payments/{payment_id}/refunds", json=body, headers={**sandbox.headers, "Idempotency-Key": key}
    )


async def refunds_of(client: httpx.AsyncClient, sandbox: Sandbox, payment_id: str) -> list[dict[str, Any]]:
    listed = await client.get(f"/v1/payments/{payment_id}/refunds", headers=sandbox.headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["items"])


@pytest.mark.parametrize(
    ("provider", "opening", "losing", "kind"),
    [(C, "chargeback", "chargeback_lost", "chargeback"), (B, "chargeback", "chargeback_lost", "chargeback")],
)
async def test_open_then_lost_dispute_refuses_every_refund(
    client: httpx.AsyncClient, runtime: Runtime, provider: str, opening: str, losing: str, kind: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, provider)
    payment_id = (await _payment(client, sandbox, intent["id"]))["id"]
    await settled(client, sandbox, intent["id"], opening, provider)

    during = await refund(client, sandbox, payment_id, "during", amount=5_000)
    error = assert_error(during, 409, "PAYMENT_DISPUTED")
    assert error["details"] == {"dispute_status": "OPEN", "dispute_kind": kind}
    assert "open" in error["message"] and "won" in error["message"]

    await settled(client, sandbox, intent["id"], losing, provider)
    after = await refund(client, sandbox, payment_id, "after")  # all that is left
    error = assert_error(after, 409, "PAYMENT_DISPUTED")
    assert error["details"] == {"dispute_status": "LOST", "dispute_kind": kind}
    assert "lost" in error["message"]

    # Nothing reserved, sent or recorded: no refund listed, no refund event, the payment as paid.
    assert await refunds_of(client, sandbox, payment_id) == []
    payment = await _payment(client, sandbox, intent["id"])
    assert payment["status"] == "AUTHORIZED" and payment["refunded_amount"] == 0
    assert payment["dispute"]["status"] == "LOST"
    assert not [e for e in await events_of(runtime, intent["id"]) if e["type"].startswith("refund.")]
    # A retry with the same key is refused again (a refusal is not stored under the key).
    assert_error(await refund(client, sandbox, payment_id, "after"), 409, "PAYMENT_DISPUTED")


async def test_an_open_mediation_at_b_is_refused_by_payorch_not_the_provider(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Provider B refuses a refund during a mediation too (502 before); payorch now refuses first."""
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, B)
    payment_id = (await _payment(client, sandbox, intent["id"]))["id"]
    await settled(client, sandbox, intent["id"], "mediation", B)
    error = assert_error(await refund(client, sandbox, payment_id, "m"), 409, "PAYMENT_DISPUTED")
    assert error["details"] == {"dispute_status": "OPEN", "dispute_kind": "mediation"}
    assert await refunds_of(client, sandbox, payment_id) == []


# B's own refusal stays B's: a charged_back payment is never refundable there, even reimbursed
# (502 PROVIDER_ERROR); its won mediation is.
@pytest.mark.parametrize(
    ("provider", "opening", "winning"),
    [(C, "chargeback", "chargeback_won"), (B, "mediation", "mediation_won")],
)
async def test_after_a_won_dispute_what_was_left_is_refundable(
    client: httpx.AsyncClient, runtime: Runtime, provider: str, opening: str, winning: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, provider)
    payment_id = (await _payment(client, sandbox, intent["id"]))["id"]
    first = await refund(client, sandbox, payment_id, "before", amount=2_000)
    assert first.status_code == 201, first.text
    await settled(client, sandbox, intent["id"], opening, provider)
    assert_error(await refund(client, sandbox, payment_id, "open"), 409, "PAYMENT_DISPUTED")
    await settled(client, sandbox, intent["id"], winning, provider)
    rest = await refund(client, sandbox, payment_id, "rest")  # all that is left
    assert rest.status_code == 201, rest.text
    assert rest.json()["amount"] == 8_000 and rest.json()["status"] == "SUCCEEDED"
    payment = await _payment(client, sandbox, intent["id"])
    assert payment["status"] == "REFUNDED" and payment["refunded_amount"] == 10_000
    assert payment["dispute"]["status"] == "WON"


@pytest.mark.slow  # many rounds through the simulator: a second or more
@pytest.mark.parametrize(
    "provider",
    chosen_providers(
        C,
        B,
        left_out={
            A: "its simulator has no chargeback to settle",
            PROVIDER_D: "its simulator has no chargeback to settle",
        },
    ),
)
async def test_a_dispute_racing_refunds_is_seen_by_every_refund_reserved_after_it(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    """Refunds of 1,000 each and a chargeback's notice at once, several rounds: a refund reserved
    (``refund.requested``) after the dispute was recorded (``payment.disputed``) never exists,
    and each refund either was reserved before the dispute or was refused with 409."""
    sandbox = await mock_sandbox(runtime)
    for round_ in range(4):
        intent = await paid(client, sandbox, provider)
        payment_id = (await _payment(client, sandbox, intent["id"]))["id"]
        answers = await asyncio.gather(
            *(refund(client, sandbox, payment_id, f"r{round_}-{n}", amount=1_000) for n in range(3)),
            settled(client, sandbox, intent["id"], "chargeback", provider),
            *(refund(client, sandbox, payment_id, f"r{round_}-{n}", amount=1_000) for n in range(3, 6)),
        )
        replies = [a for a in answers if isinstance(a, httpx.Response)]
        types = [e["type"] for e in await events_of(runtime, intent["id"])]
        assert "payment.disputed" in types
        after_dispute = types[types.index("payment.disputed") :]
        assert "refund.requested" not in after_dispute, types
        requested = types.count("refund.requested")
        refused = [r for r in replies if r.status_code == 409]
        assert all(r.json()["error"]["code"] == "PAYMENT_DISPUTED" for r in refused)
        assert requested + len(refused) == 6, [r.status_code for r in replies]
        # One refund more after it: refused whatever the race did.
        assert_error(await refund(client, sandbox, payment_id, f"late-{round_}"), 409, "PAYMENT_DISPUTED")
