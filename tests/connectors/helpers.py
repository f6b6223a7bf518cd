"""Helpers shared by the tests of this directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.kit import TEST_SECRET_KEY


def run_cli(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_SECRET_KEY": TEST_SECRET_KEY,
    }
    return subprocess.run(  # noqa: S603 - our own CLI, fixed arguments
        [sys.executable, "-m", "payorch", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def create_with_mock_connectors(database_url: str, environment: str) -> subprocess.CompletedProcess[str]:
    """``payorch applications create --mock-connectors --json`` for an application named cli."""
    return run_cli(
        database_url,
        "applications",
        "create",
        "--name",
        "cli",
        "--environment",
        environment,
        "--mock-connectors",
        "--json",
    )


SRC = str(Path(__file__).resolve().parents[2] / "src")
