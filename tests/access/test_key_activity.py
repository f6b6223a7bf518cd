"""The activity entries of API keys, on SQLite and PostgreSQL: api_key.created (name, scopes,
expiry, and that the secret was shown once; never the key) and api_key.revoked, each by the key
that did it, or by "system" for the command line; a refused creation or revocation writes none."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from payorch.clock import FrozenClock, isoformat
from payorch.db.tables.activity import activity_log
from payorch.runtime import Runtime
from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.kit import Sandbox, assert_error
from tests.live import payorch_env

KEYS = "/v1/admin/api-credentials"


async def entries(client: httpx.AsyncClient, sandbox: Sandbox, action: str) -> list[dict[str, Any]]:
    answer = await client.get("/v1/admin/activity", params={"action": action}, headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


async def test_created_and_revoked_keys_are_logged_by_the_key_that_acted(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, clock: FrozenClock
) -> None:
    [sandbox_key] = (await client.get(KEYS, headers=sandbox.headers)).json()["items"]
    sandbox_key_id = sandbox_key["id"]

    expiry = clock.now() + timedelta(days=7)
    body = {"name": "reports", "scopes": ["payments:read"], "expires_at": isoformat(expiry)}
    headers = {**sandbox.headers, "User-Agent": "scopes-test/1"}
    created = (await client.post(KEYS, json=body, headers=headers)).json()
    newest = (await entries(client, sandbox, "api_key.created"))[0]
    assert newest["resource"] == {"type": "api_key", "id": created["id"]}
    assert newest["actor"] == {"type": "api_key", "id": sandbox_key_id, "email": None}
    assert newest["changes"] == {
        "name": "reports",
        "scopes": ["payments:read"],
        "expires_at": isoformat(expiry),
        "secret": "shown once",
    }
    assert newest["outcome"] == "success" and newest["origin"]["user_agent"] == "scopes-test/1"

    # Refused creations write nothing.
    restricted = {"Authorization": f"Bearer {created['api_key']}"}
    assert_error(
        await client.post(KEYS, json={"scopes": ["nope"]}, headers=sandbox.headers), 400, "VALIDATION_ERROR"
    )
    assert_error(await client.post(KEYS, headers=restricted), 403, "FORBIDDEN")
    assert len(await entries(client, sandbox, "api_key.created")) == 1

    revoked = await client.delete(f"{KEYS}/{created['id']}", headers=sandbox.headers)
    assert revoked.status_code == 204
    [entry] = await entries(client, sandbox, "api_key.revoked")
    assert entry["resource"] == {"type": "api_key", "id": created["id"]}
    assert entry["actor"] == {"type": "api_key", "id": sandbox_key_id, "email": None}
    assert entry["changes"] == {"name": "reports", "prefix": created["prefix"]}
    # Revoking it again changes nothing and logs nothing; the last active key is refused.
    assert (await client.delete(f"{KEYS}/{created['id']}", headers=sandbox.headers)).status_code == 204
    last = await client.delete(f"{KEYS}/{sandbox_key_id}", headers=sandbox.headers)
    assert_error(last, 409, "INVALID_STATE")
    assert len(await entries(client, sandbox, "api_key.revoked")) == 1

    # No key is anywhere in the log.
    async with runtime.database.reading() as conn:
        rows = (await conn.execute(select(activity_log))).all()
    text = json.dumps([[str(v) for v in row] for row in rows])
    assert created["api_key"] not in text and sandbox.api_key not in text
    assert created["api_key"].rsplit("_", 1)[1] not in text  # nor its secret part


@pytest.mark.slow
async def test_the_command_line_gives_scopes_and_expiry_and_acts_as_system(
    database_url: str, client: httpx.AsyncClient, runtime: Runtime
) -> None:
    env = payorch_env(database_url)
    args = ["applications", "create", "--name", "Shop", "--environment", "SANDBOX", "--json"]
    done = cli(args, env)
    assert done.returncode == 0, done.stderr
    app = json.loads(done.stdout)
    create = ["keys", "create", "--application", app["application_id"], "--json"]
    done = cli(
        [
            *create,
            "--scope",
            "refunds:write",
            "--scope",
            "payments:read",
            "--expires-at",
            "2099-01-01T00:00:00Z",
        ],
        env,
    )
    assert done.returncode == 0, done.stderr
    issued = json.loads(done.stdout)
    assert issued["scopes"] == ["refunds:write", "payments:read"]
    assert issued["expires_at"] == "2099-01-01T00:00:00.000Z"
    text = cli([*create[:-1], "--scope", "payments:read"], env)
    assert text.returncode == 0 and "scopes: payments:read" in text.stdout
    # The key works within its scopes only.
    headers = {"Authorization": f"Bearer {issued['api_key']}"}
    assert (await client.get("/v1/payments", headers=headers)).status_code == 200
    error = assert_error(await client.get("/v1/events", headers=headers), 403, "FORBIDDEN")
    assert error["details"] == {"required_scope": "events:read"}
    # Bad input: one line each, nothing created.
    refused(cli([*create, "--scope", "payments:wrote"], env), "payments:wrote", "payments:read")
    refused(cli([*create, "--scope", "payments:read", "--scope", "payments:read"], env), "twice")
    refused(cli([*create, "--expires-at", "2020-01-01T00:00:00Z"], env), "in the future")
    bad_time = cli([*create, "--expires-at", "tomorrow"], env)
    assert bad_time.returncode == 2 and "RFC 3339" in bad_time.stderr
    # Revoked from the command line: by "system" too.
    revoked = cli(["keys", "revoke", issued["id"]], env)
    assert revoked.returncode == 0, revoked.stderr
    first = {"Authorization": f"Bearer {app['api_key']}"}
    log = await client.get("/v1/admin/activity", headers=first)
    actions = [(i["action"], i["resource"]["id"], i["actor"]["type"]) for i in log.json()["items"]]
    assert ("api_key.created", issued["id"], "system") in actions
    assert ("api_key.revoked", issued["id"], "system") in actions
    assert len([a for a in actions if a[0] == "api_key.created"]) == 2  # made here
