"""Walking a paginated list through HTTP, the way a client follows `next_cursor`."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.kit import Sandbox


async def walk(
    client: httpx.AsyncClient, app: Sandbox, url: str, limit: int = 2
) -> tuple[list[dict[str, Any]], int]:
    """Every item of the list at ``url`` (which may carry a query) and the number of pages."""
    items: list[dict[str, Any]] = []
    pages = 0
    cursor = None
    joiner = "&" if "?" in url else "?"
    while True:
        page_url = f"{url}{joiner}limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        response = await client.get(page_url, headers=app.headers)
        assert response.status_code == 200, response.text
        body = response.json()
        pages += 1
        assert len(body["items"]) <= limit
        items += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            return items, pages
        assert body["items"], "a page with a next_cursor is never empty"


async def ids(client: httpx.AsyncClient, app: Sandbox, url: str) -> list[str]:
    """The ids of every item of the list at ``url``, in order (pages of 2)."""
    return [item["id"] for item in (await walk(client, app, url))[0]]


async def dashboard_walk(
    client: httpx.AsyncClient, url: str, row: re.Pattern[str], older: re.Pattern[str]
) -> list[str]:
    """What ``row`` finds on every page of a dashboard list from ``url`` (signed-in ``client``),
    following its "Older ..." link (``older``'s group 1) until the last page."""
    shown: list[str] = []
    page = await client.get(url)
    while True:
        assert page.status_code == 200, page.text
        shown += row.findall(page.text)
        link = older.search(page.text)
        if link is None:
            return shown
        page = await client.get(link.group(1).replace("&amp;", "&"))
