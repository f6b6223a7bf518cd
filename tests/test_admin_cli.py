"""The operator's administration commands (in process; keys create as the real program) on SQLite
and PostgreSQL: `applications list`, `keys create` (the key works against a live server), `keys
revoke` (the last active key is refused, an unknown id is one line), every --help, and what a second
start of `payorch serve` says."""

from __future__ import annotations

import json
import subprocess
import tempfile

import httpx
import pytest

from tests.cli_in_process import cli
from tests.databases import own_database
from tests.live import live_server, payorch_env, run_cli

pytestmark = pytest.mark.slow

# The second-start test names the oldest sandbox application: this module gets its own database.
database_url = own_database


def create_application(env: dict[str, str], name: str = "Shop") -> dict[str, str]:
    done = cli(["applications", "create", "--name", name, "--environment", "SANDBOX", "--json"], env)
    assert done.returncode == 0, done.stderr
    created: dict[str, str] = json.loads(done.stdout)
    return created


def create_key(env: dict[str, str], application_id: str, *extra: str) -> dict[str, str]:
    done = cli(["keys", "create", "--application", application_id, "--json", *extra], env)
    assert done.returncode == 0, done.stderr
    issued: dict[str, str] = json.loads(done.stdout)
    return issued


def refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit status 1 and exactly one line on stderr holding ``words``; nothing on stdout."""
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and all(word in lines[0] for word in words), lines
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_applications_list_shows_each_application_with_its_merchants(database_url: str) -> None:
    env = payorch_env(database_url)
    first, second = create_application(env, "First"), create_application(env, "Second")
    done = cli(["applications", "list", "--json"], env)
    assert done.returncode == 0, done.stderr
    items = {item["id"]: item for item in json.loads(done.stdout)["items"]}
    for created, name in ((first, "First"), (second, "Second")):
        item = items[created["application_id"]]
        assert item["name"] == name and item["environment"] == "SANDBOX"
        assert item["merchant_account_ids"] == [created["merchant_account_id"]]
    order = list(items)
    assert order.index(first["application_id"]) < order.index(second["application_id"])
    text = cli(["applications", "list"], env)
    assert text.returncode == 0
    [line] = [line for line in text.stdout.splitlines() if second["application_id"] in line]
    assert "SANDBOX" in line and second["merchant_account_id"] in line
    assert first["api_key"] not in done.stdout + text.stdout  # a list never shows keys


def test_keys_create_prints_a_key_once_that_works_against_a_live_server(database_url: str) -> None:
    env = payorch_env(database_url)
    created = create_application(env)
    issued = create_key(env, created["application_id"], "--name", "ci")
    assert issued["api_key"].startswith("pay_sb_") and issued["id"].startswith("key_")
    assert issued["application_id"] == created["application_id"] and issued["name"] == "ci"
    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
    text = run_cli(["keys", "create", "--application", created["application_id"]], env)
    assert text.returncode == 0 and "api_key: pay_sb_" in text.stdout
    assert "shown only now" in text.stdout
    with live_server(env, "--no-worker") as base:
        headers = {"Authorization": f"Bearer {issued['api_key']}"}
        listed = httpx.get(f"{base}/v1/admin/api-credentials", headers=headers)
        assert listed.status_code == 200, listed.text
        names = {item["id"]: item["name"] for item in listed.json()["items"]}
        assert names[issued["id"]] == "ci" and len(names) == 3


def test_keys_revoke_and_the_last_active_key_is_refused(database_url: str) -> None:
    env = payorch_env(database_url)
    created = create_application(env)
    second = create_key(env, created["application_id"])
    done = cli(["keys", "revoke", second["id"]], env)
    assert done.returncode == 0, done.stderr
    assert second["id"] in done.stdout and created["application_id"] in done.stdout
    again = cli(["keys", "revoke", second["id"]], env)  # changes nothing, as the API's 204
    assert again.returncode == 0 and "already" in again.stdout
    with live_server(env, "--no-worker") as base:
        first_headers = {"Authorization": f"Bearer {created['api_key']}"}
        revoked = httpx.get(
            f"{base}/v1/admin/api-credentials",
            headers={"Authorization": f"Bearer {second['api_key']}"},
        )
        assert revoked.status_code == 401
        listed = httpx.get(f"{base}/v1/admin/api-credentials", headers=first_headers).json()
    [first_id] = [item["id"] for item in listed["items"] if item["id"] != second["id"]]
    refused(cli(["keys", "revoke", first_id], env), "last active API key", "create another")
    with live_server(env, "--no-worker") as base:  # still works: nothing was revoked
        still = httpx.get(f"{base}/v1/admin/api-credentials", headers=first_headers)
        assert still.status_code == 200


def test_unknown_ids_are_one_line_and_a_non_zero_exit(database_url: str) -> None:
    env = payorch_env(database_url)
    refused(cli(["keys", "revoke", "key_nope"], env), "key_nope")
    refused(cli(["keys", "create", "--application", "app_nope"], env), "app_nope")


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ([], ["serve", "keys", "applications", "PAYORCH_DATABASE_URL", "PAYORCH_PUBLIC_URL"]),
        (["serve"], ["(default: 8000)", "(default: 127.0.0.1)", "PAYORCH_PUBLIC_URL"]),
        (["worker"], ["PAYORCH_WORKER_METRICS_PORT", "PAYORCH_DATABASE_URL"]),
        (["migrate"], ["PAYORCH_DATABASE_URL", "PAYORCH_SECRET_KEY"]),
        (["applications", "create"], ["(default: False)", "PAYORCH_DATABASE_URL"]),
        (["applications", "list"], ["--json", "(default: False)", "PAYORCH_DATABASE_URL"]),
        (["keys"], ["create", "revoke", "PAYORCH_DATABASE_URL"]),
        (["keys", "create"], ["--application ID", "(default: None)", "PAYORCH_DATABASE_URL"]),
        (["keys", "revoke"], ["KEY_ID", "last active", "PAYORCH_DATABASE_URL"]),
        (["users"], ["invite", "set-role", "reinvite", "PAYORCH_DATABASE_URL"]),
        (["users", "invite"], ["--application-id ID", "PAYORCH_MAX_USERS", "PAYORCH_PUBLIC_URL"]),
    ],
)
def test_every_help_shows_defaults_and_the_settings_that_apply(
    tmp_path: object, command: list[str], shown: list[str]
) -> None:
    done = cli([*command, "--help"], payorch_env(f"sqlite:///{tmp_path}/h.db"))
    assert done.returncode == 0, done.stderr
    for text in shown:
        assert text in done.stdout, (text, done.stdout)


def test_a_second_start_says_where_the_service_is_and_how_to_get_a_key(database_url: str) -> None:
    env = payorch_env(database_url)
    create_application(env, "Sandbox")
    listed = json.loads(cli(["applications", "list", "--json"], env).stdout)["items"]
    oldest = next(item for item in listed if item["environment"] == "SANDBOX")
    with tempfile.TemporaryFile("w+") as output:
        with live_server(env, "--no-worker", output=output) as base:
            pass
        output.seek(0)
        printed = output.read()
    assert f"serving at {base}" in printed
    assert f"sandbox application: {oldest['id']}" in printed
    for merchant in oldest["merchant_account_ids"]:
        assert merchant in printed
    assert f"payorch keys create --application {oldest['id']}" in printed
    assert "pay_sb_" not in printed  # the key was shown once, at its creation


def test_a_production_start_suggests_no_sandbox(database_url: str, tmp_path: object) -> None:
    """PAYORCH_SIMULATOR_ENABLED=false (docs/deployment.md's production environment): `serve`
    says where it is and, on an empty database, how to create a PRODUCTION application; it
    creates no sandbox (not even on an empty SQLite file) and suggests none."""
    production = {"PAYORCH_SIMULATOR_ENABLED": "false"}
    for empty, env in (
        (True, payorch_env(f"sqlite:///{tmp_path}/empty.db", **production)),
        (False, payorch_env(database_url, **production)),
    ):
        with tempfile.TemporaryFile("w+") as output:
            with live_server(env, "--no-worker", output=output) as base:
                pass
            output.seek(0)
            printed = output.read()
        assert f"serving at {base}" in printed, printed
        assert "SANDBOX" not in printed and "mock-connectors" not in printed and "pay_sb_" not in printed
        assert "sandbox" not in printed.lower(), printed
        if empty:  # nothing was created (the module's own database may be SQLite too)
            assert "--environment PRODUCTION" in printed, printed
            assert json.loads(cli(["applications", "list", "--json"], env).stdout)["items"] == []
        else:  # this module's database holds sandbox applications: none is named
            assert "keys create" not in printed and "app_" not in printed, printed
