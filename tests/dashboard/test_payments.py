"""The payments list, the intent page and its refund form, over plain HTTP (SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, authorized_payment, create_intent, new_application
from tests.payments.fakes import REJECT, TIMEOUT_APPLIED, FakeGateway

# Its tests make people only to sign them in: each password is hashed once.
pytestmark = pytest.mark.usefixtures("passwords_hashed_once")

INTENT_LINK = re.compile(r'href="/dashboard/payments/(payi_[0-9a-z]+)"')


async def test_the_list_filters_searches_and_pages(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    await sign_in(client, sandbox)
    empty = await client.get("/dashboard/payments")
    assert "No payments yet" in empty.text
    paid = [await authorized_payment(runtime, sandbox, amount=1500) for _ in range(3)]
    created = await create_intent(client, sandbox)
    listed = await client.get("/dashboard/payments")
    everything = INTENT_LINK.findall(listed.text)
    assert everything == sorted(everything, reverse=True)  # newest first (ids are time-ordered)
    assert set(everything) == {created["id"]} | {p.intent_id for p in paid}
    assert "CLP 1,500" in listed.text  # the currency's own units (no decimals for CLP)
    only_created = await client.get("/dashboard/payments", params={"status": "CREATED"})
    assert INTENT_LINK.findall(only_created.text) == [created["id"]]
    by_reference = await client.get("/dashboard/payments", params={"q": "order-1"})
    assert INTENT_LINK.findall(by_reference.text) == [created["id"]]
    none = await client.get("/dashboard/payments", params={"q": "no-such-order"})
    assert "No payment matches these filters" in none.text
    by_id = await client.get("/dashboard/payments", params={"q": paid[0].intent_id})
    assert by_id.headers["location"] == f"/dashboard/payments/{paid[0].intent_id}"
    first = await client.get("/dashboard/payments", params={"limit": "2"})
    seen = INTENT_LINK.findall(first.text)
    cursor = re.search(r"cursor=([A-Za-z0-9_-]+)", first.text)
    assert cursor and len(seen) == 2
    second = await client.get("/dashboard/payments", params={"limit": "2", "cursor": cursor.group(1)})
    seen += INTENT_LINK.findall(second.text)
    assert seen == everything


async def test_a_bad_filter_says_what_to_fix(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    await sign_in(client, sandbox)
    page = await client.get("/dashboard/payments", params={"from": "yesterday"})
    assert page.status_code == 400
    assert "from" in page.text and "ISO 8601" in page.text


async def test_another_applications_intent_answers_the_404_page(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    other = await new_application(runtime)
    theirs = await authorized_payment(runtime, other)
    await sign_in(client, sandbox)
    page = await client.get(f"/dashboard/payments/{theirs.intent_id}")
    assert page.status_code == 404 and "Not found" in page.text
    assert theirs.intent_id not in page.text.replace(f"/dashboard/payments/{theirs.intent_id}", "")
    refund = await client.get(f"/dashboard/payments/{theirs.intent_id}/refunds")
    assert refund.status_code == 404


async def test_the_refund_form_refunds_once_on_double_submit(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=1050, currency="USD")
    csrf = await sign_in(client, sandbox)
    page = await client.get(f"/dashboard/payments/{paid.intent_id}")
    assert page.status_code == 200
    assert "$10.50" in page.text and paid.payment_id in page.text
    key = re.search(r'name="refund_key" value="([^"]+)"', page.text)
    assert key
    form = {"csrf": csrf, "refund_key": key.group(1), "amount": "2.50", "reason": "damaged"}
    url = f"/dashboard/payments/{paid.intent_id}/refunds"
    assert (await client.post(url, data={**form, "csrf": ""})).status_code == 403
    assert gateway.refund_calls == []
    for _ in range(2):  # the same page's form sent twice
        done = await client.post(url, data=form)
        assert done.status_code == 303
        assert done.headers["location"] == f"/dashboard/payments/{paid.intent_id}?notice=refunded"
    assert len(gateway.refund_calls) == 1 and gateway.total_applied() == 250
    after = await client.get(done.headers["location"])
    assert "The provider accepted the refund" in after.text
    assert "damaged" in after.text and "prv-rfd_" in after.text
    assert "PARTIALLY_REFUNDED" in after.text


async def refund_form(client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime) -> tuple[str, str]:
    """A signed-in session and a paid intent of 1000 CLP: (the refund form's URL, the CSRF token)."""
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    csrf = await sign_in(client, sandbox)
    return f"/dashboard/payments/{paid.intent_id}/refunds", csrf


@pytest.mark.parametrize(
    ("mode", "notice", "shown"),
    [
        (REJECT, "refused", ("16: refund not allowed", "status-FAILED")),  # the provider's reason
        (TIMEOUT_APPLIED, "pending", ("has not answered yet", "status-PENDING")),  # nothing claimed
    ],
)
async def test_the_providers_answer_is_shown(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    gateway: FakeGateway,
    mode: str,
    notice: str,
    shown: tuple[str, str],
) -> None:
    url, csrf = await refund_form(client, sandbox, runtime)
    gateway.mode = mode
    # All that is left (the whole 1000 CLP): more than half, so confirmed with its amount.
    sent = await client.post(url, data={"csrf": csrf, "refund_key": "k1", "amount": "", "confirmed": "1000"})
    assert sent.headers["location"].endswith(f"?notice={notice}")
    page = await client.get(sent.headers["location"])
    assert all(text in page.text for text in shown), page.text
    bad = await client.post(url, data={"csrf": csrf, "refund_key": "k2", "amount": "1.5"})
    assert bad.status_code == 400 and "has 1 decimals and CLP has none" in bad.text


async def test_a_concurrent_double_submit_is_one_refund(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, gateway: FakeGateway
) -> None:
    """The second click arrives while the first waits for the provider: it is told the refund is
    in progress, and the provider is asked once."""
    url, csrf = await refund_form(client, sandbox, runtime)
    gateway.delay = 0.5
    form = {"csrf": csrf, "refund_key": "same-page", "amount": "300"}
    first, second = await asyncio.gather(client.post(url, data=form), client.post(url, data=form))
    notices = sorted(answer.headers["location"].rsplit("=", 1)[1] for answer in (first, second))
    assert notices == ["in-progress", "refunded"]
    assert len(gateway.refund_calls) == 1 and gateway.total_applied() == 300
