"""The rate-limit tests' own Redis server (tests/ratelimit/own_redis.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.needs import missing
from tests.ratelimit.own_redis import OwnRedis


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    executable = shutil.which("redis-server")
    if executable is None:
        missing("redis-server is not installed")
    server = OwnRedis(executable)
    server.start()
    try:
        yield server
    finally:
        server.stop()
