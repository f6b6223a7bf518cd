"""The `activity` export on SQLite and PostgreSQL: CSV and JSON lines of the entries in a range,
oldest first by seq, with the list's filters; CSV guards formula-like text (a user agent that
starts with =), JSON lines keep it; bad filters are 400 naming the field; 403 without
activity:read."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import httpx
import pytest

from payorch.access.scopes import ALL_SCOPES
from payorch.activity.records import Actor, Change, Entry, Origin
from payorch.activity.service import record
from payorch.clock import isoformat
from payorch.runtime import Runtime
from tests.activity.helpers import holding, write_entries
from tests.kit import Sandbox, assert_error

URL = "/v1/exports/activity"
HYPERLINK = '=HYPERLINK("http://x","y")'


async def chain(runtime: Runtime, sandbox: Sandbox) -> list[Entry]:
    written = await write_entries(runtime, sandbox.application_id, 4)
    runtime.clock.advance(1)  # type: ignore[attr-defined]
    change = Change(
        sandbox.application_id,
        Actor("user", "usr_0000000000000000000000000c", "+1@shop.example"),
        "webhook_endpoint.secret_rotated",
        "webhook_endpoint",
        "whe_1",
        Origin("198.51.100.2", HYPERLINK, "req_x"),
        changes={"secret": "rotated"},
    )
    async with runtime.database.transaction() as conn:
        written.append(await record(conn, runtime.clock, change))
    return written


def window(entries: list[Entry]) -> dict[str, str]:
    return {
        "from": isoformat(entries[0].at - timedelta(seconds=1)),
        "to": isoformat(entries[-1].at + timedelta(seconds=1)),
    }


async def export(client: httpx.AsyncClient, sandbox: Sandbox, **params: str) -> httpx.Response:
    response = await client.get(URL, params=params, headers=sandbox.headers)
    assert response.status_code == 200, response.text
    return response


async def test_csv_and_json_lines_oldest_first_with_the_guard(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    entries = await chain(runtime, sandbox)
    text = (await export(client, sandbox, **window(entries), format="csv")).text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == [
        "id", "seq", "at", "actor_type", "actor_id", "actor_email", "action", "resource_type",
        "resource_id", "outcome", "origin_ip", "origin_user_agent", "request_id", "changes",
        "previous_hash", "hash",
    ]  # fmt: skip
    # The export's own entry is written before its rows are read: it lists itself last.
    assert [row["seq"] for row in rows] == ["1", "2", "3", "4", "5", "6"]
    assert (rows[-1]["action"], rows[-1]["resource_id"]) == ("export.created", "activity")
    last = rows[-2]
    assert last["origin_user_agent"] == "'" + HYPERLINK  # a spreadsheet does not run it
    assert last["actor_email"] == "'+1@shop.example"
    assert last["changes"] == '{"secret":"rotated"}' and last["hash"] == entries[-1].hash
    assert rows[0]["previous_hash"] == "0" * 64 and rows[1]["previous_hash"] == entries[0].hash
    assert rows[1]["actor_email"] == "" and rows[0]["at"] == isoformat(entries[0].at)

    lines = (await export(client, sandbox, **window(entries), format="jsonl")).text.splitlines()
    items = [json.loads(line) for line in lines]
    assert [item["seq"] for item in items] == [1, 2, 3, 4, 5, 6, 7]  # and both exports' entries
    assert items[4]["origin_user_agent"] == HYPERLINK and items[4]["actor_email"] == "+1@shop.example"
    assert items[0]["changes"] == '{"amount":0,"note":"n0"}'


async def test_the_lists_filters(client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime) -> None:
    entries = await chain(runtime, sandbox)
    span = window(entries)

    async def seqs(**params: str) -> list[int]:
        lines = (await export(client, sandbox, format="jsonl", **params)).text.splitlines()
        return [json.loads(line)["seq"] for line in lines]

    assert await seqs(**span, actor_id="reconciliation") == [3]
    assert await seqs(**span, action="connector.updated") == [2]
    assert await seqs(**span, resource_id="whe_1") == [5]
    assert await seqs(**{"from": isoformat(entries[1].at), "to": isoformat(entries[3].at)}) == [2, 3]
    empty = await export(client, sandbox, **span, action="user.signed_in")
    assert empty.text.count("\n") == 1  # the header alone


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"action": "Not An Action"}, "action"),
        ({"actor_id": ""}, "actor_id"),
        ({"resource_id": "r" * 65}, "resource_id"),
        ({"status": "x"}, "status"),
    ],
)
async def test_a_bad_filter_is_a_400_naming_it(
    client: httpx.AsyncClient, sandbox: Sandbox, params: dict[str, str], field: str
) -> None:
    query = {"from": "2026-01-01", "to": "2026-01-02", **params}
    error = assert_error(
        await client.get(URL, params=query, headers=sandbox.headers), 400, "VALIDATION_ERROR"
    )
    assert [problem["field"] for problem in error["details"]["errors"]] == [field]


async def test_the_other_exports_refuse_the_activity_filters(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    query = {"from": "2026-01-01", "to": "2026-01-02", "actor_id": "usr_1"}
    response = await client.get("/v1/exports/payments", params=query, headers=sandbox.headers)
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert [problem["field"] for problem in error["details"]["errors"]] == ["actor_id"]


async def test_without_activity_read_403(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        runtime.authenticator, "authenticate", holding(runtime, ALL_SCOPES - {"activity:read"})
    )
    query = {"from": "2026-01-01", "to": "2026-01-02"}
    error = assert_error(await client.get(URL, params=query, headers=sandbox.headers), 403, "FORBIDDEN")
    assert error["details"] == {"required_scope": "activity:read"}
