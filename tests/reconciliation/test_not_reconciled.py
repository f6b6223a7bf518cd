"""A provider without a reconciliation reader (its registration's ``reconciliation`` None) is listed
in the day's report as not reconciled, never left out (a missing row reads as "nothing to
compare"): through the API and the dashboard's page, on SQLite and PostgreSQL. The provider is
a registered one with its reader taken away (this module only)."""

from __future__ import annotations

import dataclasses

import httpx
import pytest

from payorch.providers import registry
from payorch.providers.registration import ProviderRegistration
from payorch.reconciliation.service import NO_READER
from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import mock_sandbox
from tests.reconciliation.helpers import of_provider, paid, reconcile, today

UNREAD = registry.REGISTRATIONS[-1]  # any registered provider will do: it loses its reader here
READ = registry.REGISTRATIONS[0]


@pytest.fixture(autouse=True)
def without_reader(monkeypatch: pytest.MonkeyPatch) -> ProviderRegistration:
    planted = dataclasses.replace(UNREAD, reconciliation=None)
    monkeypatch.setitem(registry._BY_ID, UNREAD.provider_id, planted)
    return planted


async def test_a_provider_without_a_reader_is_reported_not_reconciled(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    assert UNREAD.provider_id != READ.provider_id and READ.reconciliation is not None
    sandbox = await mock_sandbox(runtime)
    await paid(client, sandbox, READ.provider_id, 1500)
    await paid(client, sandbox, UNREAD.provider_id, 2500)  # a payment of the day nobody compares
    body = await reconcile(client, sandbox, runtime)
    unread = of_provider(body, UNREAD.provider_id)
    assert unread == {
        "provider": UNREAD.provider_id,
        "matched": {"count": 0, "amounts": []},
        "findings": 0,
        "unavailable": NO_READER,
        "reconciled": False,
    }
    read = of_provider(body, READ.provider_id)
    assert read["reconciled"] is True and read["unavailable"] is None
    assert read["matched"]["count"] == 1
    # Every enabled connector's provider has its row: none is silently missing.
    assert {p["provider"] for p in body["providers"]} == set(registry.PROVIDER_IDS)
    assert body["findings"] == []

    await sign_in(client, sandbox)
    page = await client.get("/dashboard/reconciliation", params={"date": today(runtime)})
    assert page.status_code == 200, page.text
    row = page.text[page.text.index(f"<code>{UNREAD.provider_id}</code>") :]
    row = row[: row.index("</tr>")]
    assert "Not reconciled" in row and "no reconciliation reader" in row
    read_row = page.text[page.text.index(f"<code>{READ.provider_id}</code>") :]
    assert "Not reconciled" not in read_row[: read_row.index("</tr>")]
