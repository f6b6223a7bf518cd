"""The payments list's filters over plain HTTP (SQLite, PostgreSQL): the known values are selects,
a bad value answers 400 with the same form, its values kept and the message beside the field;
the 404 page keeps the navigation of a signed-in viewer."""

from __future__ import annotations

import re

import httpx

from payorch.providers.registry import PROVIDER_IDS
from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, authorized_payment

INTENT_LINK = re.compile(r'href="/dashboard/payments/(payi_[0-9a-z]+)"')
NAV = '<nav aria-label="Dashboard">'


def options_of(page: str, select: str) -> list[str]:
    found = re.search(rf'<select id="{select}" name="{select}"[^>]*>(.*?)</select>', page, re.S)
    assert found, page
    return re.findall(r'<option value="([^"]*)"', found.group(1))


async def test_provider_and_status_are_selects_that_find(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    await sign_in(client, sandbox)
    a = await authorized_payment(runtime, sandbox, provider=PROVIDER_IDS[0])
    b = await authorized_payment(runtime, sandbox, provider=PROVIDER_IDS[1], status="REFUNDED")
    page = (await client.get("/dashboard/payments")).text
    assert options_of(page, "provider") == ["", *PROVIDER_IDS]  # no free text: no dead placeholder
    assert "REFUNDED" in options_of(page, "status") and "AUTHORIZED" in options_of(page, "status")
    assert options_of(page, "merchant_account_id") == ["", sandbox.merchant_account_id]
    for provider, paid in ((PROVIDER_IDS[0], a), (PROVIDER_IDS[1], b)):
        found = await client.get("/dashboard/payments", params={"provider": provider})
        assert found.status_code == 200 and INTENT_LINK.findall(found.text) == [paid.intent_id]
        assert f'<option value="{provider}" selected>' in found.text  # the choice is kept
    refunded = await client.get("/dashboard/payments", params={"status": "REFUNDED"})
    assert INTENT_LINK.findall(refunded.text) == [b.intent_id]


async def test_a_bad_filter_is_told_beside_its_field_in_the_same_form(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    await sign_in(client, sandbox)
    paid = await authorized_payment(runtime, sandbox, external_reference="order-kept")
    cases = [
        ({"from": "yesterday", "q": "order-kept"}, "from", "ISO 8601"),
        ({"to": "2026-02-30"}, "to", "must be a date"),
        ({"provider": "provider_a"}, "provider", "provider_a is not a provider"),
        ({"status": "PAID"}, "status", "PAID is not an intent status"),
        ({"merchant_account_id": "mer_nope"}, "merchant_account_id", "No merchant of this application"),
        ({"q": "x" * 65}, "q", "at most 64 characters"),
    ]
    for params, control, said in cases:
        page = await client.get("/dashboard/payments", params=params)
        assert page.status_code == 400, (params, page.text)
        text = page.text
        error = re.search(rf'<p class="field-error" id="{control}-error">([^<]*)</p>', text)
        assert error and said in error.group(1), (params, text)
        # The message sits in the field's own box, and the field points at it.
        box = text[text.index(f'<label for="{control}">') :]
        assert box.index(f'id="{control}-error"') < box.index(f'id="{control}"')
        assert re.search(rf'id="{control}"[^>]*aria-invalid="true" aria-describedby="{control}-error"', text)
        assert 'role="search"' in text and "Show payments" in text and NAV in text  # the same page
        assert INTENT_LINK.findall(text) == []  # nothing listed under a filter that was not applied
    kept = (await client.get("/dashboard/payments", params=cases[0][0])).text
    assert 'value="yesterday"' in kept and 'value="order-kept"' in kept
    fixed = await client.get("/dashboard/payments", params={"from": "2000-01-01", "q": "order-kept"})
    assert fixed.status_code == 200 and INTENT_LINK.findall(fixed.text) == [paid.intent_id]
    paging = await client.get("/dashboard/payments", params={"limit": "0"})
    assert paging.status_code == 400 and 'id="query-error">limit:' in paging.text


async def test_the_404_page_keeps_the_navigation(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    signed_out = await client.get("/dashboard/no-such-page")
    assert signed_out.status_code == 404 and NAV not in signed_out.text
    await sign_in(client, sandbox)
    for path in ("/dashboard/no-such-page", "/dashboard/payments/payi_00000000000000000000000000"):
        page = await client.get(path)
        assert page.status_code == 404 and "Not found" in page.text, path
        assert NAV in page.text and 'href="/dashboard/payments"' in page.text and "Sign out" in page.text
