"""GET /v1/admin/api-credentials pages like the other lists ({items, next_cursor}, `cursor`,
`limit` 1 to 100, default 20), newest first, on SQLite and PostgreSQL."""

from __future__ import annotations

import httpx
import pytest

from tests.kit import Sandbox, assert_error

URL = "/v1/admin/api-credentials"


pytestmark = pytest.mark.settings(max_api_keys=30)


async def test_pages_walk_every_key_newest_first(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    made = [(await client.post(URL, headers=sandbox.headers)).json()["id"] for _ in range(24)]
    first = await client.get(URL, headers=sandbox.headers)
    assert first.status_code == 200, first.text
    assert set(first.json()) == {"items", "next_cursor"}
    assert len(first.json()["items"]) == 20  # the default limit
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params = {"limit": 7, **({"cursor": cursor} if cursor else {})}
        page = (await client.get(URL, params=params, headers=sandbox.headers)).json()
        assert len(page["items"]) <= 7
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 25 and seen[:24] == list(reversed(made))  # then the first key
    assert seen == sorted(seen, reverse=True)


@pytest.mark.parametrize(
    ("params", "field"),
    [({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"cursor": "whe_x"}, "cursor"), ({"q": "1"}, "q")],
)
async def test_a_bad_parameter_is_a_400_naming_it(
    client: httpx.AsyncClient, sandbox: Sandbox, params: dict[str, object], field: str
) -> None:
    response = await client.get(URL, params=params, headers=sandbox.headers)
    assert_error(response, 400, "VALIDATION_ERROR")
    assert [e["field"] for e in response.json()["error"]["details"]["errors"]] == [field]
