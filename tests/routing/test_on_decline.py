"""The routing program's on_decline (docs/routing.md, "A second chance after a decline"): saved
and shown with its version; a bad value is refused in the error shape and nothing is saved."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from payorch.runtime import Runtime
from tests.kit import assert_error, mock_sandbox
from tests.routing.helpers import put_routing, routing_url


async def test_saved_and_shown(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    saved = await put_routing(client, sandbox, {"on_decline": {"retry": True}})
    assert saved.status_code == 200, saved.text
    assert saved.json()["on_decline"] == {"retry": True, "max_attempts": 3}
    read = await client.get(routing_url(sandbox), headers=sandbox.headers)
    assert read.json()["on_decline"] == {"retry": True, "max_attempts": 3}
    without = await put_routing(client, sandbox, {"rules": []})
    assert without.json()["on_decline"] is None


@pytest.mark.parametrize(
    ("on_decline", "field"),
    [
        ({"retry": True, "max_attempts": 1}, "on_decline.max_attempts"),
        ({"retry": True, "max_attempts": 6}, "on_decline.max_attempts"),
        ({"retry": True, "max_attempts": "3"}, "on_decline.max_attempts"),
        ({"retry": "yes"}, "on_decline.retry"),
        ({"max_attempts": 3}, "on_decline.retry"),
        ({"retry": True, "later": True}, "on_decline.later"),
    ],
)
async def test_bad_values_are_refused_and_nothing_is_saved(
    client: httpx.AsyncClient, runtime: Runtime, on_decline: dict[str, Any], field: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    refused = await put_routing(client, sandbox, {"on_decline": on_decline})
    error = assert_error(refused, 400, "VALIDATION_ERROR")
    assert field in [e["field"] for e in error["details"]["errors"]], error
    read = await client.get(routing_url(sandbox), headers=sandbox.headers)
    assert read.json()["version"] is None
