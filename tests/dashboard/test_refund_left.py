"""The refund form and what is left to refund, over plain HTTP (SQLite, PostgreSQL): more than is
left is refused before any confirmation, in the currency's own format (never minor units), with
refunds still PENDING counted; the confirmation says the amount typed, as the one parser read it."""

from __future__ import annotations

import re

import httpx
import pytest

from payorch.runtime import Runtime
from tests.dashboard.forms import paid_intent
from tests.kit import Sandbox
from tests.payments.fakes import TIMEOUT_NOT_APPLIED, FakeGateway

# Its tests make people only to sign them in: each password is hashed once.
pytestmark = pytest.mark.usefixtures("passwords_hashed_once")


def refusal(page: str) -> str:
    found = re.search(r'<p class="[a-z -]*field-error" id="amount-error" role="alert">([^<]+)</p>', page)
    assert found, page
    return " ".join(found.group(1).split())


async def test_more_than_is_left_is_refused_before_confirming(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, gateway: FakeGateway
) -> None:
    url, page, csrf = await paid_intent(client, sandbox, runtime)
    # What the attack typed on a $2,000.00 payment: no "Refund $2,000.01?" page, no minor units.
    over = await client.post(url, data={"csrf": csrf, "refund_key": "a", "amount": "2,000.01"})
    assert over.status_code == 400, over.text
    assert "Refund $2,000.01?" not in over.text and "200000" not in refusal(over.text)
    assert refusal(over.text) == (
        "Not refunded: $2,000.01 is more than is left. At most $2,000.00 is left to refund of the "
        "$2,000.00 paid: type that or less, or leave the amount empty to refund all that is left."
    )
    assert 'value="2,000.01"' in over.text and gateway.refund_calls == []
    # A confirmed one may not carry more either.
    forced = await client.post(
        url, data={"csrf": csrf, "refund_key": "a", "amount": "2,000.01", "confirmed": "200001"}
    )
    assert forced.status_code == 400 and gateway.refund_calls == []

    asked = await client.post(url, data={"csrf": csrf, "refund_key": "b", "amount": "1,500.5"})
    assert (
        asked.status_code == 200
        and "Refund $1,500.50?" in asked.text
        and "<code>1,500.5</code>" in asked.text
    )
    done = await client.post(
        url, data={"csrf": csrf, "refund_key": "b", "amount": "1,500.5", "confirmed": "150050"}
    )
    assert done.status_code == 303 and gateway.total_applied() == 150_050
    rest = await client.post(url, data={"csrf": csrf, "refund_key": "c", "amount": "500"})
    assert rest.status_code == 400 and "At most $499.50 is left to refund" in refusal(rest.text)
    assert (
        await client.post(url, data={"csrf": csrf, "refund_key": "d", "amount": "499.50"})
    ).status_code == 303
    nothing = await client.post(url, data={"csrf": csrf, "refund_key": "e", "amount": ""})
    assert nothing.status_code == 400, nothing.text
    assert refusal(nothing.text) == (
        "Not refunded: nothing is left to refund: $2,000.00 of the $2,000.00 paid is refunded or being refunded."
    )
    assert gateway.total_applied() == 200_000 and "REFUNDED" in (await client.get(page)).text


async def test_a_pending_refund_counts_and_whole_currencies_read_as_written(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, gateway: FakeGateway
) -> None:
    url, _, csrf = await paid_intent(client, sandbox, runtime, amount=20_000, currency="CLP")
    gateway.mode = TIMEOUT_NOT_APPLIED  # the provider's answer is lost: the refund stays PENDING
    pending = await client.post(url, data={"csrf": csrf, "refund_key": "p", "amount": "5,000"})
    assert pending.status_code == 303 and pending.headers["location"].endswith("?notice=pending")
    gateway.mode = "ok"
    over = await client.post(url, data={"csrf": csrf, "refund_key": "q", "amount": "15,001"})
    assert over.status_code == 400, over.text
    said = refusal(over.text)
    assert (
        "CLP 15,001 is more than is left. At most CLP 15,000 is left to refund of the CLP 20,000 paid" in said
    )
    assert len(gateway.refund_calls) == 1  # only the pending one was sent


@pytest.mark.parametrize(("typed", "shown"), [("1,000.01", "$1,000.01"), ("1999.99", "$1,999.99")])
async def test_the_confirmation_says_what_was_typed_as_read(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    gateway: FakeGateway,
    typed: str,
    shown: str,
) -> None:
    url, _, csrf = await paid_intent(client, sandbox, runtime)
    asked = await client.post(url, data={"csrf": csrf, "refund_key": "k", "amount": typed})
    assert asked.status_code == 200, asked.text
    assert f"Refund {shown}?" in asked.text and f"You typed <code>{typed}</code>" in asked.text
    assert "$2,000.00 is left to refund" in asked.text and gateway.refund_calls == []
