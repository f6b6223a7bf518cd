"""A fresh database through the command line: created private, migrated before first use."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import live_server, payorch_env, run_cli

pytestmark = pytest.mark.slow


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The common default umask, under which files are world-readable unless made otherwise."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> str:
    return oct(path.stat().st_mode & 0o777)


def test_applications_create_migrates_a_fresh_database_first(fresh_database_url: str) -> None:
    """An empty database gets its tables first; a SQLite file must be there (an empty one is a
    database without tables): a missing one is refused (tests/cli/test_no_database.py)."""
    if fresh_database_url.startswith("sqlite"):
        Path(fresh_database_url.split(":///", 1)[1]).touch(mode=0o600)
    env = payorch_env(fresh_database_url)
    result = run_cli(["applications", "create", "--name", "First", "--environment", "SANDBOX", "--json"], env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    created = json.loads(result.stdout)  # stdout is exactly the JSON object
    with live_server(env, "--no-worker") as base:
        answer = httpx.get(f"{base}/v1/payments", headers={"Authorization": f"Bearer {created['api_key']}"})
    assert answer.status_code == 200, answer.text


def test_migrate_creates_the_sqlite_database_owner_only(tmp_path: Path, umask_022: None) -> None:
    db = tmp_path / "data" / "payorch.db"
    result = run_cli(["migrate"], payorch_env(f"sqlite:///{db}"))
    assert result.returncode == 0, result.stderr
    assert _mode(db) == "0o600"


def test_serve_keeps_the_sqlite_database_and_its_wal_and_shm_owner_only(
    tmp_path: Path, umask_022: None
) -> None:
    db = tmp_path / "payorch.db"
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    with live_server(payorch_env(f"sqlite:///{db}")):  # migrates, then its worker polls
        deadline = time.monotonic() + 30
        while not all(f.exists() for f in files) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert {f.name: _mode(f) for f in files} == {f.name: "0o600" for f in files}
