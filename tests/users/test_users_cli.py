"""`payorch users ...` and `payorch applications create --owner-email` (in process; one invite as
the real program) on SQLite and PostgreSQL: the owner's invite URL is printed once and sets their
password; invite, list, set-role, disable, enable, reinvite and remove by id or email; the last
active owner stays (one line, exit status 1); bad input is one line (exit 1) or a usage error (exit
2) and changes nothing. Few commands: each is a process of its own. And the upgrade: a database at
migration 0023 with an application and no user gets, after `payorch migrate`, an owner through
`payorch users invite`."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from payorch.db import Database
from payorch.db.migrate import alembic_config
from payorch.users import service
from tests.cli_in_process import cli
from tests.databases import create_postgres_database, drop_postgres_database
from tests.live import payorch_env, run_cli

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
PREFIX = "http://127.0.0.1:8000/dashboard/invite/"  # PAYORCH_PUBLIC_URL's default


def ok(args: list[str], env: dict[str, str]) -> str:
    done = cli(args, env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and all(word in lines[0] for word in words), lines
    assert "Traceback" not in done.stderr and done.stdout == ""


async def accept(database_url: str, invite_url: str) -> None:
    assert invite_url.startswith(PREFIX), invite_url
    database = Database(database_url)
    try:
        async with database.transaction() as conn:
            from payorch.clock import SystemClock

            await service.accept_invite(conn, SystemClock(), invite_url.removeprefix(PREFIX), PASSWORD)
    finally:
        await database.dispose()


def users_of(env: dict[str, str], application_id: str) -> dict[str, tuple[str, str]]:
    listed = json.loads(ok(["users", "list", "--application-id", application_id, "--json"], env))
    return {u["email"]: (u["role"], u["status"]) for u in listed["items"]}


async def test_an_owner_from_applications_create_and_the_users_commands(database_url: str) -> None:
    env = payorch_env(database_url)
    create = ["applications", "create", "--name", "Shop", "--environment", "SANDBOX", "--json"]
    bad = cli([*create, "--owner-email", "not-an-email"], env)
    refused(bad, "--owner-email: must be an email address")
    before = len(json.loads(ok(["applications", "list", "--json"], env))["items"])

    created = json.loads(ok([*create, "--owner-email", "Boss@Example.com"], env))
    assert len(json.loads(ok(["applications", "list", "--json"], env))["items"]) == before + 1
    app = created["application_id"]
    await accept(database_url, created["owner_invite_url"])
    assert users_of(env, app) == {"boss@example.com": ("owner", "ACTIVE")}

    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
    invited = run_cli(
        ["users", "invite", "--application-id", app, "--email", "dev@example.com", "--role", "developer"], env
    ).stdout
    lines = dict(line.split(": ", 1) for line in invited.splitlines() if ": " in line)
    assert (lines["email"], lines["role"], lines["status"]) == ("dev@example.com", "developer", "INVITED")
    assert "shown only now" in invited and "72 hours" in invited
    renewed = json.loads(
        ok(["users", "reinvite", "--application-id", app, "--email", "dev@example.com", "--json"], env)
    )
    assert renewed["invite_url"] != lines["invite_url"]
    await accept(database_url, renewed["invite_url"])

    target = ["--application-id", app, "--email", "dev@example.com"]
    assert json.loads(ok(["users", "set-role", *target, "--role", "owner", "--json"], env))["role"] == "owner"
    ok(["users", "disable", "--application-id", app, "--user-id", lines["id"]], env)
    # The boss is now the last ACTIVE owner: not demoted, disabled or removed.
    boss = ["--application-id", app, "--email", "boss@example.com"]
    refused(cli(["users", "set-role", *boss, "--role", "admin"], env), "last active owner", "demoted")
    refused(cli(["users", "remove", *boss], env), "last active owner", "removed")
    ok(["users", "enable", *target], env)
    assert "removed" in ok(["users", "remove", *target], env)  # another owner was active

    # Bad input: one line (the API's refusal) or a usage error; nothing changes.
    invite = ["users", "invite", "--application-id", app]
    refused(cli([*invite, "--email", "BOSS@example.com", "--role", "viewer"], env), "already a user")
    usage = cli([*invite, "--email", "v@example.com", "--role", "root"], env)
    assert usage.returncode == 2 and "--role" in usage.stderr
    assert users_of(env, app) == {"boss@example.com": ("owner", "ACTIVE")}


@pytest.fixture
async def database_at_0023(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
        admin = None
    else:
        url, admin = await create_postgres_database()
    thread = threading.Thread(target=command.upgrade, args=(alembic_config(url), "0023"))
    thread.start()
    thread.join()
    try:
        yield url
    finally:
        if admin is not None:
            await drop_postgres_database(url, admin)


async def test_an_application_from_before_0024_gets_its_owner_by_invite(database_at_0023: str) -> None:
    database = Database(database_at_0023)
    try:
        async with database.transaction() as conn:  # as 0023 left it: an application, no user
            await conn.execute(
                text(
                    "INSERT INTO applications (id, name, environment, created_at)"
                    " VALUES ('app_old', 'Old shop', 'PRODUCTION', CURRENT_TIMESTAMP)"
                )
            )
    finally:
        await database.dispose()
    env = payorch_env(database_at_0023)
    assert "migrated the database from 0023 to" in cli(["migrate"], env).stderr
    assert "No users yet: payorch users invite --application-id app_old" in ok(
        ["users", "list", "--application-id", "app_old"], env
    )
    invited = json.loads(
        ok(
            [
                "users",
                "invite",
                "--application-id",
                "app_old",
                "--email",
                "me@old.example",
                "--role",
                "owner",
                "--json",
            ],
            env,
        )
    )
    await accept(database_at_0023, invited["invite_url"])
    database = Database(database_at_0023)
    try:
        async with database.reading() as conn:
            owner = await service.find_by_email(conn, "app_old", "me@old.example")
    finally:
        await database.dispose()
    assert owner is not None and (owner.role, owner.status) == ("owner", "ACTIVE")
