"""The dashboard's API keys page pages like the API's list (`cursor`, `limit`): a page holds at
most `limit` keys and links to the older ones, so its size does not grow with the keys."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.dashboard.signing import sign_in
from tests.kit import Sandbox
from tests.pages import dashboard_walk

URL = "/v1/admin/api-credentials"
PREFIX = re.compile(r'<td class="mono">([0-9a-f]{12})</td>')
OLDER = re.compile(r'href="(/dashboard/api-keys\?[^"]*cursor=[^"]+)">Older keys')


pytestmark = pytest.mark.settings(max_api_keys=30)


async def test_the_keys_page_shows_a_page_and_links_to_the_older_keys(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    for _ in range(24):
        assert (await client.post(URL, headers=sandbox.headers)).status_code == 201
    listed = (await client.get(URL, params={"limit": 100}, headers=sandbox.headers)).json()
    every = [item["prefix"] for item in listed["items"]]
    await sign_in(client, sandbox)

    first = await client.get("/dashboard/api-keys")
    assert first.status_code == 200, first.text
    assert PREFIX.findall(first.text) == every[:20]  # the API's default page size
    shown = await dashboard_walk(client, "/dashboard/api-keys?limit=10", PREFIX, OLDER)
    assert shown == every and len(shown) == 25


async def test_a_bad_cursor_is_a_400_page(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    await sign_in(client, sandbox)
    page = await client.get("/dashboard/api-keys", params={"cursor": "nonsense"})
    assert page.status_code == 400 and "cursor" in page.text
