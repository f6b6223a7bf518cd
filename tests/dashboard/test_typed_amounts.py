"""Amounts people type into the dashboard's forms (refund, sandbox test payment) and its priority
field, over plain HTTP (SQLite, PostgreSQL): one rule, refusals that say what to type and move
nothing, and a confirmation before a refund of more than half the payment."""

from __future__ import annotations

import re

import httpx
import pytest

from payorch.runtime import Runtime
from tests.dashboard.forms import paid_intent
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox
from tests.payments.fakes import FakeGateway

# Each test signs a new person in to reach a form: their password is hashed once.
pytestmark = pytest.mark.usefixtures("passwords_hashed_once")

RULE = "with &#39;.&#39; before at most 2 decimals, and &#39;,&#39; between thousands"

# What the third attack typed on a paid USD 2,000.00 intent, and more: each refused, nothing moves.
REFUSED = [
    ("10,50", "only separates thousands"),  # was refunded as 1,050.00
    ("0,01", "only separates thousands"),  # was 1.00
    ("1,5", "only separates thousands"),  # was 15.00
    ("1_000", "is not an amount"),  # was 1,000.00
    ("1e2", "is not an amount"),  # was 100.00
    ("Infinity", "is not an amount"),  # was a 500
    ("sNaN", "is not an amount"),  # was a 500
    ("NaN", "is not an amount"),
    ("-5", "is not an amount"),
    ("+5", "is not an amount"),
    ("10.505", "has 3 decimals and USD has 2"),
    ("1.", "ends with"),
    (".5", "is not an amount"),
    ("1 000", "is not an amount"),
    ("１２", "is not an amount"),  # full-width digits: Decimal reads them
    ("0", "above zero"),
    ("1,00,000", "only separates thousands"),  # another locale's grouping
    ("9" * 41, "is not an amount"),
]


async def add_mock_connector(client: httpx.AsyncClient, app: Sandbox) -> None:
    url = f"/v1/admin/merchant-accounts/{app.merchant_account_id}/connectors"
    added = await client.post(
        url, json={"provider": "provider_b_redirect_get", "mode": "MOCK"}, headers=app.headers
    )
    assert added.status_code == 201, added.text


@pytest.mark.parametrize(("typed", "said"), REFUSED)
async def test_what_is_not_an_amount_is_refused_and_refunds_nothing(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    gateway: FakeGateway,
    typed: str,
    said: str,
) -> None:
    url, page, csrf = await paid_intent(client, sandbox, runtime)
    answer = await client.post(url, data={"csrf": csrf, "refund_key": "k", "amount": typed})
    assert answer.status_code == 400, answer.text
    assert said in answer.text and RULE in answer.text  # what is wrong, and what to type
    assert 'id="amount-error"' in answer.text and "Not refunded" in answer.text
    assert gateway.refund_calls == []
    assert "$0.00" in (await client.get(page)).text  # refunded so far


async def test_the_form_says_its_rule_and_reads_exactly_that(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, gateway: FakeGateway
) -> None:
    url, page, csrf = await paid_intent(client, sandbox, runtime)
    shown = (await client.get(page)).text
    assert RULE in shown and "such as 1,234.56" in shown
    for key, typed in (("k1", "1,000.00"), ("k2", "10.5"), ("k3", "0.01"), ("k4", "007")):
        done = await client.post(url, data={"csrf": csrf, "refund_key": key, "amount": typed})
        assert done.status_code == 303, done.text
    assert gateway.total_applied() == 100_000 + 1_050 + 1 + 700  # and no other refund
    assert "$1,017.51" in (await client.get(page)).text


async def test_more_than_half_is_refunded_only_after_confirming_the_amount(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, gateway: FakeGateway
) -> None:
    url, page, csrf = await paid_intent(client, sandbox, runtime)
    form = {"csrf": csrf, "refund_key": "big", "amount": "1,500", "reason": "damaged"}
    asked = await client.post(url, data=form)
    assert asked.status_code == 200 and gateway.refund_calls == []
    assert "Refund $1,500.00?" in asked.text and "of the $2,000.00 paid" in asked.text
    confirmed = re.search(r'name="confirmed" value="(\d+)"', asked.text)
    assert confirmed and confirmed.group(1) == "150000"
    # A confirmation of another amount than the form's moves nothing: it asks again.
    tampered = await client.post(url, data={**form, "confirmed": "150"})
    assert tampered.status_code == 200 and gateway.refund_calls == []
    done = await client.post(url, data={**form, "confirmed": "150000"})
    assert done.status_code == 303 and done.headers["location"].endswith("?notice=refunded")
    assert gateway.total_applied() == 150_000
    # Empty: all that is left ($500.00), a quarter of the payment: no confirmation.
    rest = await client.post(url, data={"csrf": csrf, "refund_key": "rest", "amount": ""})
    assert rest.status_code == 303 and gateway.total_applied() == 200_000
    assert "REFUNDED" in (await client.get(page)).text


async def test_all_that_is_left_is_confirmed_when_it_is_more_than_half(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, gateway: FakeGateway
) -> None:
    url, _, csrf = await paid_intent(client, sandbox, runtime)
    asked = await client.post(url, data={"csrf": csrf, "refund_key": "all", "amount": ""})
    assert asked.status_code == 200 and "Refund $2,000.00?" in asked.text and "all that is left" in asked.text
    assert gateway.refund_calls == []
    done = await client.post(
        url, data={"csrf": csrf, "refund_key": "all", "amount": "", "confirmed": "200000"}
    )
    assert done.status_code == 303 and gateway.total_applied() == 200_000


@pytest.mark.parametrize(
    ("amount", "currency", "said"),
    [
        ("10,50", "USD", "only separates thousands"),
        ("Infinity", "USD", "is not an amount"),
        ("1.5", "CLP", "has 1 decimals and CLP has none"),
        ("", "CLP", "Type an amount"),
        ("10", "usd", "upper case"),
    ],
)
async def test_the_test_payment_form_keeps_the_same_rule(
    client: httpx.AsyncClient, sandbox: Sandbox, amount: str, currency: str, said: str
) -> None:
    csrf = await sign_in(client, sandbox)
    await add_mock_connector(client, sandbox)
    form = {"csrf": csrf, "merchant_account_id": sandbox.merchant_account_id, "provider": "auto"}
    refused = await client.post("/dashboard/sandbox", data={**form, "amount": amount, "currency": currency})
    assert refused.status_code == 400 and said in refused.text, refused.text
    assert (await client.get("/v1/payment-intents", headers=sandbox.headers)).json()["items"] == []
    made = await client.post("/dashboard/sandbox", data={**form, "amount": "1,500", "currency": "CLP"})
    assert made.status_code == 303, made.text
    [intent] = (await client.get("/v1/payment-intents", headers=sandbox.headers)).json()["items"]
    assert intent["amount"] == 1500


async def test_a_refused_test_payment_keeps_the_form_with_the_message_beside_its_field(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    csrf = await sign_in(client, sandbox)
    await add_mock_connector(client, sandbox)
    form = {"csrf": csrf, "merchant_account_id": sandbox.merchant_account_id, "currency": "USD"}
    refused = await client.post("/dashboard/sandbox", data={**form, "amount": "10,50", "provider": "auto"})
    assert refused.status_code == 400, refused.text
    page = refused.text
    assert '<form method="post"' in page and 'value="10,50"' in page and 'value="USD"' in page
    assert re.search(r'id="amount-error"[^>]*>[^<]*only separates thousands', page), page
    assert re.search(
        r'<input id="amount"[^>]*aria-invalid="true"[^>]*aria-describedby="amount-rule amount-error"', page
    )
    # A provider the merchant has no connector for: told beside the provider, the choice kept.
    other = await client.post(
        "/dashboard/sandbox", data={**form, "amount": "10.50", "provider": "provider_c_redirect_get"}
    )
    assert other.status_code == 400, other.text
    assert re.search(r'id="provider-error"[^>]*>[^<]*provider_c_redirect_get', other.text), other.text
    assert '<option value="provider_c_redirect_get" selected>' in other.text
    # A merchant of no one: told above the form.
    unknown = await client.post(
        "/dashboard/sandbox",
        data={**form, "merchant_account_id": "mrc_nobody", "amount": "1", "provider": "auto"},
    )
    assert unknown.status_code == 400 and 'id="form-problem"' in unknown.text, unknown.text
    assert (await client.get("/v1/payment-intents", headers=sandbox.headers)).json()["items"] == []


@pytest.mark.parametrize("priority", ["²", "١", "-1", "1e2", "99999999999999999999"])
async def test_a_priority_that_is_not_a_whole_number_is_a_400(
    client: httpx.AsyncClient, sandbox: Sandbox, priority: str
) -> None:
    csrf = await sign_in(client, sandbox)
    await add_mock_connector(client, sandbox)
    page = (await client.get("/dashboard/providers")).text
    [connector_id] = re.findall(rf"/dashboard/providers/{sandbox.merchant_account_id}/(cfg_[0-9a-z]+)", page)[
        :1
    ]
    url = f"/dashboard/providers/{sandbox.merchant_account_id}/{connector_id}"
    answer = await client.post(url, data={"csrf": csrf, "action": "priority", "priority": priority})
    assert answer.status_code == 400, answer.text
