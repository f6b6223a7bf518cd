"""The overview: counts and amounts per window, the hourly chart, provider and webhook health
(plain HTTP, SQLite and PostgreSQL)."""

from __future__ import annotations

import re

import httpx

from payorch.clock import FrozenClock
from payorch.providers.health import health_key
from payorch.runtime import Runtime
from tests.dashboard.helpers import add_mock_connector
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, authorized_payment


async def test_the_overview_counts_draws_and_shows_health(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, clock: FrozenClock
) -> None:
    await sign_in(client, sandbox)
    empty = (await client.get("/dashboard/overview")).text
    assert "No payment intents in this period" in empty and "No provider configured" in empty

    def now_ms() -> int:  # ids are time-ordered: made at the test clock's time, like rows
        return int(clock.now().timestamp() * 1000)

    await authorized_payment(runtime, sandbox, amount=1050, currency="USD", at_ms=now_ms())
    await authorized_payment(runtime, sandbox, amount=1500, currency="CLP", status="REFUNDED", at_ms=now_ms())
    clock.advance(3 * 24 * 3600)  # these two are now only in the 7-day window
    await sign_in(client, sandbox)  # the first session expired meanwhile
    await authorized_payment(runtime, sandbox, amount=2000, currency="CLP", at_ms=now_ms())
    await add_mock_connector(client, sandbox)
    listed = await client.get(
        f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors", headers=sandbox.headers
    )
    [connector] = listed.json()["items"]
    key = health_key(connector["provider"], connector["mode"], connector["id"])
    for _ in range(runtime.settings.provider_failure_threshold):
        await runtime.provider_health.failed(key)

    answer = await client.get("/dashboard/overview")
    assert answer.status_code == 200, answer.text[-3000:]
    page = answer.text
    day, week = page.split("Last 7 days")
    assert "CLP 2,000" in day and "$10.50" not in day
    assert "$10.50" in week and "CLP 3,500" in week  # 1,500 + 2,000 authorized in 7 days
    assert re.search(r"AUTHORIZED</span></a></td><td class=\"num\">2<", week)
    assert re.search(r"REFUNDED</span></a></td><td class=\"num\">1<", week)
    bars = re.findall(r'<rect x="\d+" y="\d+" width="\d+" height="(\d+)" fill="#2e9e5f"/>', page)
    assert bars == ["40"]  # one authorized intent in the last 24 hours, on a scale of 0 to 4
    assert "scale 0 to 4" in page and re.search(r"<span class=\"tick t4\">4</span>", page)
    skipped = clock.now().timestamp() + runtime.settings.provider_skip_seconds
    assert "skipped until" in page and "status-skipped" in page
    assert f"{int(skipped) // 60 % 60:02d}:" in page
