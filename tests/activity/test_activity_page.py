"""The dashboard's Activity page over HTTP on SQLite and PostgreSQL: the empty state, the entries
newest first with their actor, action and resource, each filter, paging by seq, a bad filter is
a 400 page naming the field with the form kept, and the navigation links it."""

from __future__ import annotations

import re

import httpx
import pytest

from payorch.runtime import Runtime
from tests.activity.helpers import write_entries
from tests.dashboard.signing import sign_in_with_key
from tests.kit import Sandbox

ROWS = re.compile(r'title="(act_[0-9a-z]+), hash')
# A key's session (SANDBOX, behind its setting): signing in as a person writes entries itself
# (tests/dashboard/test_sign_in.py), and this page starts from an empty log.
pytestmark = pytest.mark.settings(dashboard_key_sign_in=True)


async def shown(client: httpx.AsyncClient, **params: str) -> list[str]:
    page = await client.get("/dashboard/activity", params=params)
    assert page.status_code == 200, page.text
    return ROWS.findall(page.text)


async def test_the_page_lists_filters_and_pages(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    await sign_in_with_key(client, sandbox)
    empty = await client.get("/dashboard/activity")
    assert empty.status_code == 200 and "No activity yet." in empty.text
    assert 'href="/dashboard/activity"' in (await client.get("/dashboard/overview")).text

    entries = await write_entries(runtime, sandbox.application_id, 25)
    ids = [entry.id for entry in entries]
    first = await client.get("/dashboard/activity")
    assert ROWS.findall(first.text) == ids[::-1][:20]
    assert "ana@" in first.text and "refund.created" in first.text
    assert 'cursor=6"' in first.text  # the next page starts below seq 6
    assert await shown(client, cursor="6") == ids[::-1][20:]

    assert await shown(client, actor_id="reconciliation", limit="3") == [ids[23], ids[20], ids[17]]
    assert await shown(client, action="api_key.revoked", resource_id="res_2") == [ids[2]]
    assert await shown(client, resource_id="res_7") == [ids[7]]
    nothing = await client.get("/dashboard/activity", params={"action": "user.signed_in"})
    assert "No entry matches these filters." in nothing.text


@pytest.mark.parametrize(
    ("params", "field"),
    [({"action": "Bad Action"}, "action"), ({"from": "yesterday"}, "from"), ({"to": "2026-13-01"}, "to")],
)
async def test_a_bad_filter_is_a_400_page_naming_it(
    client: httpx.AsyncClient, sandbox: Sandbox, params: dict[str, str], field: str
) -> None:
    await sign_in_with_key(client, sandbox)
    page = await client.get("/dashboard/activity", params=params)
    assert page.status_code == 400, page.text
    assert f'id="{field}-error"' in page.text and 'aria-invalid="true"' in page.text
    assert f'value="{params[field]}"' in page.text
