"""PAYORCH_MAX_API_KEYS on SQLite and PostgreSQL: one more active key than the cap is 409
LIMIT_EXCEEDED and creates nothing, through the API (also when creates race at the cap), the
dashboard's form and `payorch keys create` (one line, exit status 1); revoked keys do not count."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from payorch.runtime import Runtime
from tests.cli_in_process import cli
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, assert_error, new_application
from tests.live import payorch_env

URL = "/v1/admin/api-credentials"
CAP = 3


pytestmark = [pytest.mark.slow, pytest.mark.settings(max_api_keys=CAP)]


async def key_ids(client: httpx.AsyncClient, app: Sandbox) -> list[str]:
    page = (await client.get(URL, params={"limit": 100}, headers=app.headers)).json()
    return [item["id"] for item in page["items"]]


def assert_over_cap(response: httpx.Response, current: int) -> None:
    assert_error(response, 409, "LIMIT_EXCEEDED")
    error = response.json()["error"]
    assert error["details"] == {"limit": CAP, "current": current}
    assert f"at most {CAP}" in error["message"] and "Revoke a key" in error["message"]


async def test_one_key_over_the_cap_is_refused_and_revoked_keys_do_not_count(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    for _ in range(CAP - 1):  # the application's first key is the first of CAP
        assert (await client.post(URL, headers=sandbox.headers)).status_code == 201
    before = await key_ids(client, sandbox)
    assert_over_cap(await client.post(URL, json={"name": "one more"}, headers=sandbox.headers), CAP)
    assert await key_ids(client, sandbox) == before
    revoked = await client.delete(f"{URL}/{before[0]}", headers=sandbox.headers)
    assert revoked.status_code == 204
    assert (await client.post(URL, headers=sandbox.headers)).status_code == 201
    assert_over_cap(await client.post(URL, headers=sandbox.headers), CAP)
    other = await new_application(runtime)  # the cap is per application
    assert (await client.post(URL, headers=other.headers)).status_code == 201


async def test_concurrent_creates_at_the_cap_create_exactly_up_to_it(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    answers = await asyncio.gather(*(client.post(URL, headers=sandbox.headers) for _ in range(8)))
    assert sorted(a.status_code for a in answers) == [201] * (CAP - 1) + [409] * (9 - CAP)
    for refused in (a for a in answers if a.status_code != 201):
        assert_error(refused, 409, "LIMIT_EXCEEDED")
    assert len(await key_ids(client, sandbox)) == CAP


async def test_the_dashboard_form_over_the_cap_says_what_to_do_and_creates_nothing(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    for _ in range(CAP - 1):
        assert (await client.post(URL, headers=sandbox.headers)).status_code == 201
    csrf = await sign_in(client, sandbox)
    answer = await client.post("/dashboard/api-keys", data={"csrf": csrf, "name": "one more"})
    assert answer.status_code == 409, answer.text
    assert f"at most {CAP} are allowed" in answer.text and "Revoke a key" in answer.text
    assert "pay_sb_" not in answer.text
    assert len(await key_ids(client, sandbox)) == CAP


def test_keys_create_over_the_cap_is_one_line(database_url: str) -> None:
    env = payorch_env(database_url, PAYORCH_MAX_API_KEYS="2")
    done = cli(["applications", "create", "--name", "Shop", "--environment", "SANDBOX", "--json"], env)
    assert done.returncode == 0, done.stderr
    application_id = json.loads(done.stdout)["application_id"]
    create = ["keys", "create", "--application", application_id]
    assert cli(create, env).returncode == 0
    refused = cli(create, env)
    assert refused.returncode == 1 and refused.stdout == ""
    [line] = refused.stderr.strip().splitlines()
    assert line == (
        "payorch: The application has 2 active API keys; at most 2 are allowed. "
        "Revoke a key it no longer uses, then create this one."
    )
