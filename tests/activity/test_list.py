"""GET /v1/admin/activity on SQLite and PostgreSQL: the entries written by record(), newest
first, paged by seq; each filter; the shape of an item; only the caller's application; bad
filters are a 400 naming the field; a caller without `activity:read` is 403 naming the scope."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from payorch.access.scopes import ALL_SCOPES
from payorch.activity.verification import entry_hash
from payorch.clock import isoformat
from payorch.runtime import Runtime
from tests.activity.helpers import holding, write_entries
from tests.kit import Sandbox, assert_error, new_application

URL = "/v1/admin/activity"


async def listed(client: httpx.AsyncClient, sandbox: Sandbox, **params: object) -> dict[str, object]:
    response = await client.get(URL, params=params, headers=sandbox.headers)
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


def seqs(body: dict[str, object]) -> list[int]:
    items = body["items"]
    assert isinstance(items, list)
    return [item["seq"] for item in items]


async def test_newest_first_paged_by_seq_with_each_items_fields(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    written = await write_entries(runtime, sandbox.application_id, 5)
    first = await listed(client, sandbox, limit=2)
    assert seqs(first) == [5, 4] and first["next_cursor"] == "4"
    second = await listed(client, sandbox, limit=2, cursor=first["next_cursor"])
    assert seqs(second) == [3, 2] and second["next_cursor"] == "2"
    last = await listed(client, sandbox, limit=2, cursor="2")
    assert seqs(last) == [1] and last["next_cursor"] is None

    items = (await listed(client, sandbox))["items"]
    assert isinstance(items, list)
    entry = written[0]
    assert items[-1] == {
        "id": entry.id,
        "seq": 1,
        "at": isoformat(entry.at),
        "actor": {"type": "user", "id": "usr_0000000000000000000000000a", "email": "ana@shop.example"},
        "action": "refund.created",
        "resource": {"type": "refund", "id": "res_0"},
        "outcome": "success",
        "origin": {"ip": "203.0.113.7", "user_agent": "Mozilla/5.0 =cmd"},
        "request_id": "req_0",
        "changes": {"amount": 0, "note": "n0"},
        "hash": entry.hash,
        "previous_hash": "0" * 64,
    }
    assert items[-2]["actor"] == {"type": "api_key", "id": "key_0000000000000000000000000b", "email": None}
    assert items[-2]["previous_hash"] == entry.hash
    assert all(entry_hash(e) == e.hash for e in written)


async def test_each_filter(client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime) -> None:
    written = await write_entries(runtime, sandbox.application_id, 7)
    by_actor = await listed(client, sandbox, actor_id="reconciliation")
    assert seqs(by_actor) == [6, 3]
    by_action = await listed(client, sandbox, action="connector.updated")
    assert seqs(by_action) == [6, 2]
    by_resource = await listed(client, sandbox, resource_id="res_4")
    assert seqs(by_resource) == [5]
    # `at` is a second apart: [from, to) holds seqs 3 and 4.
    window = await listed(
        client, sandbox, **{"from": isoformat(written[2].at), "to": isoformat(written[4].at)}
    )
    assert seqs(window) == [4, 3]
    both = await listed(client, sandbox, actor_id="reconciliation", action="connector.updated")
    assert seqs(both) == [6]
    day = (written[0].at + timedelta(days=2)).date().isoformat()
    assert (await listed(client, sandbox, **{"from": day}))["items"] == []
    assert (await listed(client, sandbox, action="user.signed_in")) == {"items": [], "next_cursor": None}


async def test_only_the_callers_application(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    await write_entries(runtime, sandbox.application_id, 2)
    other = await new_application(runtime)
    assert (await listed(client, other)) == {"items": [], "next_cursor": None}
    assert (await listed(client, other, resource_id="res_0"))["items"] == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"action": "Refund Created"}, "action"),
        ({"action": "x" * 65}, "action"),
        ({"actor_id": ""}, "actor_id"),
        ({"resource_id": "r" * 65}, "resource_id"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-01"}, "to"),
        ({"cursor": "act_1"}, "cursor"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"actor": "usr_1"}, "actor"),
    ],
)
async def test_a_bad_filter_is_a_400_naming_it(
    client: httpx.AsyncClient, sandbox: Sandbox, params: dict[str, object], field: str
) -> None:
    error = assert_error(
        await client.get(URL, params=params, headers=sandbox.headers), 400, "VALIDATION_ERROR"
    )
    assert [problem["field"] for problem in error["details"]["errors"]] == [field]


async def test_without_a_key_401(client: httpx.AsyncClient) -> None:
    assert_error(await client.get(URL), 401, "AUTHENTICATION_FAILED")


async def test_a_caller_without_activity_read_is_refused(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller whose scopes lack activity:read (a restricted key, a viewer's session): the key
    is taken as holding the scopes given here, whoever builds the caller from what is stored."""
    await write_entries(runtime, sandbox.application_id, 1)
    monkeypatch.setattr(
        runtime.authenticator, "authenticate", holding(runtime, ALL_SCOPES - {"activity:read"})
    )
    error = assert_error(await client.get(URL, headers=sandbox.headers), 403, "FORBIDDEN")
    assert error["details"] == {"required_scope": "activity:read"}
    monkeypatch.setattr(runtime.authenticator, "authenticate", holding(runtime, frozenset({"activity:read"})))
    assert seqs(await listed(client, sandbox)) == [1]
