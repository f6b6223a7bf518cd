"""What the browser tests share: a live server on its own SQLite file, and where screenshots go."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import browser as web


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[web.Server]:
    path = tmp_path_factory.mktemp("e2e") / "payorch.db"
    with web.serve_payorch(f"sqlite:///{path}", "--no-worker") as found:
        yield found


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return web.shots_dir(default=tmp_path)
