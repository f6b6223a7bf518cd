"""What the command line says when something is wrong or the reader goes away (in process,
tests/cli_in_process.py; the real program where a process is the point): a database that cannot be
reached or opened is one line naming PAYORCH_DATABASE_URL (the traceback only with --debug);
`migrate` says what it applied; a closed pipe ends quietly; `--help` names no file of the package;
the second start's hint works as printed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.kit import refused_address
from tests.live import free_port, migrated, payorch_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://payorch:hunter2@REFUSED/payorch", "REFUSED"),  # nothing listens there
        ("postgresql://payorch:hunter2@no-such-host.invalid/payorch", "no-such-host.invalid"),
        ("sqlite:////proc/no-such-dir/payorch.db", "/proc/no-such-dir"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [["migrate"], ["applications", "list"], ["keys", "list", "--application", "app_x"]],
)
def test_an_unreachable_database_is_one_line_naming_the_setting(
    url: str, shown: str, command: list[str]
) -> None:
    with refused_address() as address:
        done = cli(command, payorch_env(url.replace("REFUSED", address)))
    refused(done, "PAYORCH_DATABASE_URL", shown.replace("REFUSED", address), status=2)
    assert "hunter2" not in done.stderr


def test_debug_shows_the_traceback() -> None:
    with refused_address() as address:
        done = cli(["--debug", "migrate"], payorch_env(f"postgresql://p:q@{address}/payorch"))
    assert done.returncode != 0 and "Traceback" in done.stderr


def test_migrate_says_what_it_applied(tmp_path: Path) -> None:
    env = payorch_env(f"sqlite:///{tmp_path}/m.db")
    first = cli(["migrate"], env)
    assert first.returncode == 0, first.stderr
    assert "from nothing" in first.stderr and "revision(s) applied" in first.stderr
    second = cli(["migrate"], env)
    assert second.returncode == 0 and "nothing to do" in second.stderr
    assert first.stderr != second.stderr


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path: Path) -> None:
    env = migrated(payorch_env(f"sqlite:///{tmp_path}/p.db"))
    for _ in range(3):
        create = ["applications", "create", "--name", "A", "--environment", "SANDBOX", "--json"]
        assert cli(create, env).returncode == 0
    # The reader is gone before the command writes: its output meets a closed pipe.
    read, write = os.pipe()
    os.close(read)
    with tempfile.TemporaryFile("w+") as errors:
        status = subprocess.run(
            [sys.executable, "-m", "payorch", "applications", "list", "--json"],
            env=env,
            stdout=write,
            stderr=errors,
            check=False,
            timeout=60,
        ).returncode
        os.close(write)
        errors.seek(0)
        said = errors.read()
    assert "Traceback" not in said and "BrokenPipeError" not in said, said
    assert status in (0, 1), status


def test_help_names_no_file_of_the_package(tmp_path: Path) -> None:
    done = cli(["--help"], payorch_env(f"sqlite:///{tmp_path}/h.db"))
    assert done.returncode == 0
    assert ".py" not in done.stdout, done.stdout
    for command in ("keys", "connectors", "payments", "webhooks", "--debug"):
        assert command in done.stdout


def test_the_second_start_names_the_program_as_it_was_started(tmp_path: Path) -> None:
    """Started as .venv/bin/payorch with no payorch on PATH (as `make run`): the hint names
    that path, and it works as printed."""
    script = Path(sys.executable).parent / "payorch"
    env = migrated(payorch_env(f"sqlite:///{tmp_path}/s.db", PATH="/usr/bin:/bin"))
    assert cli(["applications", "create", "--name", "S", "--environment", "SANDBOX"], env).returncode == 0
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [str(script.relative_to(ROOT)), "serve", "--no-worker", "--port", str(port)],
        cwd=ROOT,
        env={**env, "PAYORCH_PUBLIC_URL": base},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines: list[str] = []
        assert process.stdout is not None
        while not any("a new key for it:" in line for line in lines):
            line = process.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
    finally:
        process.terminate()
        process.wait(timeout=30)
    [hint] = [line for line in lines if "a new key for it:" in line]
    printed = hint.split("a new key for it:", 1)[1].split()
    assert printed[0] == str(script.relative_to(ROOT)) and printed[1:3] == ["keys", "create"], hint
    again = subprocess.run(printed, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert again.returncode == 0 and "api_key: pay_sb_" in again.stdout, again.stderr
