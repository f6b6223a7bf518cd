"""`payorch keys list` and `payorch connectors list|add|set|remove` (in process; the real program
for one key and two connector commands), on SQLite and PostgreSQL: every key with its state, paged
through; a PRODUCTION connector added, changed and removed with credentials from stdin and
--credential that never appear in any output; the API's refusals as one line and exit status 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from payorch.admin_cli import KEYS_PAGE
from payorch.runtime import Runtime
from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.kit import new_application
from tests.live import payorch_env

SECRET = "sk_live_do-not-print-me-0123456789"
HOOK_SECRET = "whsec_also-secret-9876543210"


# the in-process API creates a page of keys
pytestmark = [pytest.mark.slow, pytest.mark.settings(max_api_keys=KEYS_PAGE + 10)]


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr and HOOK_SECRET not in done.stdout + done.stderr
    return done.stdout


def application(env: dict[str, str], environment: str) -> dict[str, str]:
    args = ["applications", "create", "--name", "Shop", "--environment", environment, "--json"]
    created: dict[str, str] = json.loads(ok(cli(args, env)))
    return created


def test_keys_list_shows_every_key_with_its_state(database_url: str) -> None:
    env = payorch_env(database_url, PAYORCH_MAX_API_KEYS="200")
    app = application(env, "SANDBOX")["application_id"]
    made = [
        json.loads(ok(cli(["keys", "create", "--application", app, "--json"], env))) for _ in range(2)
    ]
    ok(cli(["keys", "revoke", made[0]["id"]], env))
    listed = json.loads(ok(cli(["keys", "list", "--application", app, "--json"], env)))["items"]
    assert len(listed) == 3 and {item["id"] for item in made} < {item["id"] for item in listed}
    states = {item["id"]: item["revoked_at"] is not None for item in listed}
    assert states[made[0]["id"]] and not states[made[1]["id"]]
    assert all(set(item) >= {"id", "name", "prefix", "created_at"} for item in listed)
    text = ok(cli(["keys", "list", "--application", app], env))
    [line] = [line for line in text.splitlines() if made[0]["id"] in line]
    assert made[0]["prefix"] in line and "revoked" in line and made[0]["created_at"] in line
    assert all(item["api_key"] not in text for item in made)  # a list never shows keys
    refused(cli(["keys", "list", "--application", "app_nope"], env), "app_nope")


async def test_keys_list_reads_every_page(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    app = await new_application(runtime)
    for _ in range(KEYS_PAGE):  # with the first key: one more than a page
        made = await client.post("/v1/admin/api-credentials", json={}, headers=app.headers)
        assert made.status_code == 201, made.text
    env = payorch_env(database_url)
    listed = json.loads(ok(cli(["keys", "list", "--application", app.application_id, "--json"], env)))
    ids = [item["id"] for item in listed["items"]]
    assert len(ids) == KEYS_PAGE + 1 and len(set(ids)) == KEYS_PAGE + 1


def test_a_production_connector_added_changed_and_removed(database_url: str) -> None:
    env = payorch_env(database_url)
    merchant = application(env, "PRODUCTION")["merchant_account_id"]
    base = ["connectors"]
    add = [
        *base,
        "add",
        "--merchant",
        merchant,
        "--provider",
        "provider_c_redirect_get",
        "--mode",
        "PRODUCTION",
    ]
    # Not a terminal and no credentials given: refused naming the provider's fields.
    refused(cli([*add, "--priority", "3"], env), "secret_key", "webhook_secret", "--credential")
    done = subprocess.run(
        [*_command(), *add, "--priority", "3", "--credentials-stdin", "--json"],
        input=f"secret_key={SECRET}\nwebhook_secret={HOOK_SECRET}\n",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    added = json.loads(ok(done))
    assert (added["mode"], added["enabled"], added["priority"], added["has_credentials"]) == (
        "PRODUCTION",
        True,
        3,
        True,
    )
    refused(cli([*add, "--credential", f"secret_key={SECRET}"], env), "webhook_secret")
    # MOCK is for SANDBOX applications: the API's rule, one line.
    mock = [*base, "add", "--merchant", merchant, "--provider", "provider_a_redirect_post", "--mode", "MOCK"]
    refused(cli(mock, env), "MOCK", "SANDBOX")

    change = [*base, "set", added["id"], "--merchant", merchant]
    changed = json.loads(ok(cli([*change, "--no-enabled", "--priority", "7", "--json"], env)))
    assert (changed["enabled"], changed["priority"], changed["mode"]) == (False, 7, "PRODUCTION")
    ok(
        cli(
            [
                *change,
                "--credential",
                f"secret_key={SECRET}2",
                "--credential",
                f"webhook_secret={HOOK_SECRET}",
            ],
            env,
        )
    )
    refused(cli([*change, "--mode", "MOCK"], env), "MOCK")
    refused(cli([*change, "--credential", "nonsense=1"], env), "credentials.nonsense")
    text = ok(cli([*base, "list", "--merchant", merchant], env))
    [line] = text.splitlines()
    assert added["id"] in line and "disabled" in line and "priority 7" in line and "credentials set" in line

    removed = ok(cli([*base, "remove", added["id"], "--merchant", merchant], env))
    assert added["id"] in removed
    assert json.loads(ok(cli([*base, "list", "--merchant", merchant, "--json"], env))) == {"items": []}
    refused(cli([*base, "remove", added["id"], "--merchant", merchant], env), added["id"])
    refused(cli([*base, "list", "--merchant", "mrc_nope"], env), "mrc_nope")


def _command() -> list[str]:
    return [sys.executable, "-m", "payorch"]


def test_credentials_asked_at_a_terminal_are_not_echoed(database_url: str) -> None:
    """At a terminal, `connectors add` asks for each of the provider's registered fields with
    echo off: the typed secrets never appear on the terminal."""
    import pty

    from payorch.providers.registry import registration_of

    env = payorch_env(database_url)
    merchant = application(env, "SANDBOX")["merchant_account_id"]
    provider = "provider_b_redirect_get"
    fields = registration_of(provider).credential_fields
    args = ["connectors", "add", "--merchant", merchant, "--provider", provider, "--mode", "SANDBOX"]
    pid, terminal = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal, as a person's would be
        os.execve(sys.executable, [sys.executable, "-m", "payorch", *args], env)
    shown = b""
    for number, field in enumerate(fields):
        while f"{field} (".encode() not in shown:
            shown += os.read(terminal, 1024)
        os.write(terminal, f"{SECRET}{number}\n".encode())
    while True:
        try:
            chunk = os.read(terminal, 1024)
        except OSError:  # EIO: the child has exited and closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    _, status = os.waitpid(pid, 0)
    text = shown.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert SECRET not in text and "credentials set" in text, text
    [item] = json.loads(ok(cli(["connectors", "list", "--merchant", merchant, "--json"], env)))["items"]
    assert item["provider"] == provider and item["mode"] == "SANDBOX" and item["has_credentials"]
