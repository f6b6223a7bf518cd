"""What the browser tests share: a live server on its own SQLite file, and where screenshots go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, Server
from tests.live import live_server, payorch_env
from tests.needs import missing


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not Path(CHROMIUM).exists():
        missing("Debian chromium is not installed (apt-get install chromium)")
    path = tmp_path_factory.mktemp("e2e") / "payorch.db"
    env = payorch_env(f"sqlite:///{path}")
    with live_server(env, "--no-worker") as url:
        yield Server(url, env)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    target = Path(os.environ.get("PAYORCH_E2E_SCREENSHOTS", tmp_path))
    target.mkdir(parents=True, exist_ok=True)
    return target
