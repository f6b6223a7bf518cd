"""The intent page of a disputed payment, over plain HTTP (SQLite, PostgreSQL): it shows the
dispute and, while it is OPEN or after it was LOST, says why nothing can be refunded instead of
the refund form; a form sent anyway (a page shown before the dispute) refunds nothing and comes
back with the reason. After a WON dispute the form is back."""

from __future__ import annotations

import httpx
import pytest

from payorch.payments import repository
from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, authorized_payment
from tests.payments.fakes import FakeGateway


async def disputed(runtime: Runtime, payment_id: str, status: str) -> None:
    """The payment's chargeback as payments/disputes records it: opened, and ended unless OPEN."""
    now = runtime.clock.now()
    async with runtime.database.transaction() as conn:
        await repository.set_dispute(conn, payment_id, "OPEN", "chargeback", disputed_at=now)
        if status != "OPEN":
            await repository.set_dispute(conn, payment_id, status, "chargeback", closed_at=now)


@pytest.mark.parametrize(("status", "said"), [("OPEN", "is open"), ("LOST", "was lost")])
async def test_a_disputed_payment_shows_why_it_cannot_be_refunded(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    gateway: FakeGateway,
    status: str,
    said: str,
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=200_000, currency="USD")
    csrf = await sign_in(client, sandbox)
    page, url = f"/dashboard/payments/{paid.intent_id}", f"/dashboard/payments/{paid.intent_id}/refunds"
    assert 'name="refund_key"' in (await client.get(page)).text  # the form, before the dispute
    await disputed(runtime, paid.payment_id, status)

    shown = (await client.get(page)).text
    assert 'id="dispute"' in shown and f"chargeback <strong>{status}</strong>" in shown
    assert 'id="not-refundable"' in shown and said in shown
    assert 'name="refund_key"' not in shown

    # The form as the page showed it before the dispute: no confirmation, nothing sent.
    for amount in ("1,500", "10"):
        sent = await client.post(url, data={"csrf": csrf, "refund_key": f"k{amount}", "amount": amount})
        assert sent.status_code == 303 and sent.headers["location"].endswith("?notice=disputed")
    assert gateway.refund_calls == []
    back = (await client.get(page + "?notice=disputed")).text
    assert "Not refunded: the payment is disputed" in back and "$0.00" in back


async def test_after_a_won_dispute_the_refund_form_is_back(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=200_000, currency="USD")
    csrf = await sign_in(client, sandbox)
    await disputed(runtime, paid.payment_id, "WON")
    shown = (await client.get(f"/dashboard/payments/{paid.intent_id}")).text
    assert "chargeback <strong>WON</strong>" in shown and 'name="refund_key"' in shown
    assert 'id="not-refundable"' not in shown
    url = f"/dashboard/payments/{paid.intent_id}/refunds"
    done = await client.post(url, data={"csrf": csrf, "refund_key": "k", "amount": "10"})
    assert done.status_code == 303 and done.headers["location"].endswith("?notice=refunded")
    assert gateway.total_applied() == 1_000
