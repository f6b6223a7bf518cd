"""Commands other than `serve` and `migrate` do not create a database (in process,
tests/cli_in_process.py; the real program where a process is the point): an embedded database that
is not there is one line naming it, `payorch migrate` and PAYORCH_DATABASE_URL, exit status 2, and
no file is left behind (a command run from another directory used to create an empty ./payorch.db).
`migrate` creates it; then they work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.live import payorch_env

pytestmark = pytest.mark.slow

COMMANDS = [
    ["applications", "create", "--name", "Shop", "--environment", "SANDBOX"],
    ["applications", "list"],
    ["keys", "list", "--application", "app_x"],
    ["connectors", "list", "--merchant", "mrc_x"],
    ["payments", "show", "payi_x"],
    ["webhooks", "retry", "whd_x"],
    ["worker"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_command_on_a_database_that_is_not_there_creates_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    database = tmp_path / "none.db"
    done = cli(command, payorch_env(f"sqlite:///{database}"))
    refused(done, f"no database at {database}", "migrate", "PAYORCH_DATABASE_URL", status=2)
    assert list(tmp_path.iterdir()) == []  # neither the database nor its key file


def test_the_default_database_is_not_made_in_another_directory(tmp_path: Path) -> None:
    env = payorch_env("unused")
    del env["PAYORCH_DATABASE_URL"]  # the default: ./payorch.db
    done = subprocess.run(
        [sys.executable, "-m", "payorch", "applications", "list"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    refused(done, f"no database at {tmp_path / 'payorch.db'}", "migrate", status=2)
    assert os.listdir(tmp_path) == []


def test_migrate_creates_it_and_then_the_commands_work(tmp_path: Path) -> None:
    env = payorch_env(f"sqlite:///{tmp_path / 'made.db'}")
    assert cli(["migrate"], env).returncode == 0
    listed = cli(["applications", "list"], env)
    assert listed.returncode == 0 and "No applications yet" in listed.stdout, listed
