"""`payorch serve` (what `make run` starts) says where the dashboard is on every start."""

from __future__ import annotations

import tempfile
from pathlib import Path

import httpx
import pytest

from tests.live import live_server, payorch_env

pytestmark = pytest.mark.slow


def test_every_start_prints_the_dashboard_address(tmp_path: Path) -> None:
    env = payorch_env(f"sqlite:///{tmp_path / 'payorch.db'}")
    for _ in range(2):  # the first start creates the sandbox application; the second does not
        with tempfile.TemporaryFile("w+") as output, live_server(env, "--no-worker", output=output) as url:
            output.seek(0)
            printed = output.read()
            assert f"payorch: dashboard at {url}/dashboard" in printed, printed
            assert httpx.get(f"{url}/dashboard/sign-in").status_code == 200
