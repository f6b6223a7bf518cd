"""Schemathesis 4 from outside, every check on: `python -m schemathesis.cli run --checks all`
against a live `payorch serve` with a sandbox key, once per database (SQLite and PostgreSQL).

Any failure fails the test, with schemathesis' own report as the message. The run's settings
(which statuses are expected for the negative cases, and why) are in tests/schemathesis.toml.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kit import Sandbox
from tests.live import live_server, payorch_env

pytestmark = pytest.mark.slow

CONFIG = Path(__file__).with_name("schemathesis.toml")
# Modest: the run is in `make test` on 2 cores; every operation still gets its coverage phase.
MAX_EXAMPLES = 25
TIMEOUT = 600


@pytest.fixture(scope="module")
def live_url(database_url: str) -> Iterator[str]:
    # A limit far above what the run sends: 429s would hide the operations' own answers.
    env = payorch_env(database_url, PAYORCH_RATE_LIMIT="100000/second")
    with live_server(env, "--no-worker") as url:
        yield url


def test_schemathesis_all_checks_find_nothing(live_url: str, sandbox: Sandbox, tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(CONFIG),
        "run",
        f"{live_url}/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--header",
        f"Authorization: Bearer {sandbox.api_key}",
        # One worker: hypothesis' lambda-source cache is not thread-safe (a 2-worker run crashed in
        # ast.parse with "AST constructor recursion depth mismatch").
        "--workers",
        "1",
        "--seed",
        "12",
        "--no-color",
        "--suppress-health-check",
        "all",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path, check=False)
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    # Every generated case passed every check ("N generated, N passed"; a failure or an error
    # would add ", M failed" or ", M errored" to the line). ", M skipped": the requests the
    # ignored_auth check sends itself, without a key and with a wrong one, to the operations the
    # document secures (ApiKey); they carry no checks of their own, and the check passed.
    summary = re.search(r"^ *(\d+) generated, (\d+) passed(?:, \d+ skipped)?$", report, re.MULTILINE)
    assert summary is not None and summary[1] == summary[2] and int(summary[1]) > 0, report
