"""The dashboard's routing page over plain HTTP (SQLite, PostgreSQL): the rules form with each
check's message beside its rule, the dry run, versions with activate, each provider's
authorization rate, volume and health over the last hour and day; the overview's rate per
provider."""

from __future__ import annotations

import json
import re

import httpx

from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from tests.dashboard.forms import routing_dry_run, split_program
from tests.dashboard.signing import sign_in
from tests.kit import mock_sandbox
from tests.providers.helpers import A, B, checkout, create_intent, set_fault
from tests.routing.helpers import C
from tests.success_rates.market import market_payment, set_market


def provider_cells(page: str, provider: str) -> dict[str, str]:
    """The providers table's row of ``provider``: each cell's text by its column's label."""
    row = re.search(rf'<tr id="provider-{provider}">(.*?)</tr>', page, re.DOTALL)
    assert row, page
    cells = re.findall(r'<td[^>]*data-label="([^"]+)">(.*?)</td>', row.group(1), re.DOTALL)
    return {label: " ".join(re.sub(r"<[^>]+>", " ", text).split()) for label, text in cells}


def rule_item(page: str, index: int) -> str:
    found = re.search(rf'<li id="rule-{index}">(.*?)</li>', page, re.DOTALL)
    assert found, page
    return found.group(1)


async def test_rules_dry_run_versions_and_rates(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    csrf = await sign_in(client, sandbox)
    await set_market(client, sandbox, A, approve=0.0)  # every A payment declined
    await set_market(client, sandbox, B, approve=1.0)
    for _ in range(2):
        await market_payment(client, sandbox)  # priority: A, declined
    await set_market(client, sandbox, A, approve=0.0, give_up=1.0)
    await market_payment(client, sandbox)  # A, the buyer gave up: not in the rate
    await set_market(client, sandbox, A, approve=1.0)
    await market_payment(client, sandbox)  # A, authorized
    url = f"/dashboard/routing/{sandbox.merchant_account_id}"
    assert (
        f'href="/dashboard/routing/{sandbox.merchant_account_id}"'
        in (await client.get("/dashboard/routing")).text
    )
    page = (await client.get(url)).text
    # A: 1 of the 3 decided (33.3 %), 4 intents, in the last hour and day; B, C: nothing yet.
    a = provider_cells(page, A)
    for window in ("Last hour", "Last 24 hours"):
        assert (a[f"{window}: rate"], a[f"{window}: volume"]) == ("33.3 %", "4"), a
        assert a[f"{window}: health"] == "available throughout, no provider errors", a
    assert "no rules saved" in page

    def save(program: object) -> dict[str, str]:
        return {
            "csrf": csrf,
            "action": "save",
            "program": program if isinstance(program, str) else json.dumps(program),
        }

    bad_json = await client.post(url, data=save('{"rules": ['))
    assert bad_json.status_code == 400 and "Not JSON" in bad_json.text
    program = split_program(20)  # weights add up to 90
    refused = await client.post(url, data=save(program))
    assert refused.status_code == 400, refused.text
    assert "field-error" not in rule_item(refused.text, 0)
    assert "weights add up to 90" in rule_item(refused.text, 1)  # beside the rule it concerns
    assert "usd-to-c" in refused.text and "&#34;weight&#34;: 20" in refused.text  # the text kept
    assert (
        await client.get(
            f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/routing", headers=sandbox.headers
        )
    ).json()["version"] is None

    program = split_program(30)
    for _ in range(2):
        saved = await client.post(url, data=save(program))
        assert saved.status_code == 303 and saved.headers["location"].endswith("?notice=saved"), saved.text
    page = (await client.get(url)).text
    assert "Activate version 1" in page and "Activate version 2" not in page
    activated = await client.post(url, data={"csrf": csrf, "action": "activate", "version": "1"})
    assert activated.status_code == 303
    page = (await client.get(url)).text
    assert "Activate version 2" in page and "Active: version 1" in page

    dry = await client.post(url, data=routing_dry_run(csrf, "2500", "usd"))
    assert dry.status_code == 200, dry.text
    assert (
        re.search(rf"<dt>Chosen</dt><dd><strong>{C}</strong>", dry.text) and "usd-to-c, version 1" in dry.text
    )
    wrong = await client.post(url, data=routing_dry_run(csrf, "-1", "CLP"))
    assert wrong.status_code == 400 and "amount" in wrong.text

    overview = (await client.get("/dashboard/overview")).text
    assert "Authorization rate by provider" in overview
    assert re.search(rf"<td>{A}</td><td class=\"num\">33.3 %</td><td class=\"num\">4</td>", overview), (
        overview
    )


async def test_another_applications_merchant_is_not_found(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    mine, other = await mock_sandbox(runtime), await mock_sandbox(runtime)
    await sign_in(client, mine)
    assert (await client.get(f"/dashboard/routing/{other.merchant_account_id}")).status_code == 404


async def test_provider_health_over_the_hour_and_day(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    """A fails three times (the threshold): skipped; ten minutes later a trial succeeds. The hour
    shows it; two hours later only the day does (routing/health_history.py)."""
    sandbox = await mock_sandbox(runtime)
    await sign_in(client, sandbox)
    url = f"/dashboard/routing/{sandbox.merchant_account_id}"
    await set_fault(client, sandbox, A, "error")
    for _ in range(4):  # A first by priority: down three times, then skipped; B takes each
        answer = await checkout(client, sandbox, (await create_intent(client, sandbox))["id"])
        assert answer.status_code == 200 and answer.json()["provider"] == B, answer.text
    a = provider_cells((await client.get(url)).text, A)
    assert a["Last hour: health"] == "skipped 1 time, 3 provider errors", a
    assert a["Health now"].startswith("skipped until"), a

    clock.advance(600)
    await set_fault(client, sandbox, A, "ok")
    answer = await checkout(client, sandbox, (await create_intent(client, sandbox))["id"])
    assert answer.json()["provider"] == A, answer.text  # the trial call, which succeeds
    a = provider_cells((await client.get(url)).text, A)
    for window in ("Last hour", "Last 24 hours"):
        assert a[f"{window}: health"] == "skipped 1 time, unavailable 10 min, 3 provider errors", a
    assert a["Health now"] == "available", a
    assert provider_cells((await client.get(url)).text, B)["Last hour: health"] == (
        "available throughout, no provider errors"
    )

    clock.advance(2 * 3600)  # the transitions leave the hour, not the day
    await sign_in(client, sandbox)  # two hours idle ended the session
    a = provider_cells((await client.get(url)).text, A)
    assert a["Last hour: health"] == "available throughout, no provider errors", a
    assert a["Last 24 hours: health"] == "skipped 1 time, unavailable 10 min, 3 provider errors", a
