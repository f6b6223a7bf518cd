"""Exports behind the shipped deploy/nginx/payorch.conf (Debian's nginx), SQLite and PostgreSQL:
nginx does not buffer them, so a client that stops reading stops payorch making the export, and
its slot stays taken until the stall ends it (buffered, nginx read every export whole into a
temporary file and each slot came back at once, whatever the client read)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from payorch.runtime import Runtime
from tests.exports.helpers import ROWS, answered_within, export, seed, unread_export
from tests.kit import Sandbox, assert_error
from tests.live import live_server, payorch_env
from tests.nginx import _nginx, nginx_serving, render

pytestmark = pytest.mark.slow

CAP = 2
STALL_SECONDS = 3


@pytest.fixture(scope="module")
def proxy(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _nginx()
    prefix: Path = tmp_path_factory.mktemp("nginx")
    env = payorch_env(
        database_url,
        PAYORCH_MAX_CONCURRENT_EXPORTS=str(CAP),
        PAYORCH_EXPORT_STALL_SECONDS=str(STALL_SECONDS),
    )
    with live_server(env, "--no-worker") as upstream:
        # A small send buffer towards the client (Linux grows it to 4 MiB, more than the export):
        # what the client does not read then stays between payorch and nginx.
        config = render(upstream.removeprefix("http://"), "${PAYORCH_LISTEN} sndbuf=16k")
        # The shipped per-address limit, not the one connection render() leaves for its tests.
        config = config.replace("limit_conn payorch_per_address 1;", "limit_conn payorch_per_address 50;")
        with nginx_serving(prefix, config) as url:
            yield url


@pytest.fixture
async def seeded(runtime: Runtime, sandbox: Sandbox) -> str:
    return await seed(runtime, sandbox)


async def test_unread_exports_through_nginx_hold_their_slots_until_the_stall_ends_them(
    sandbox: Sandbox, seeded: str, proxy: str
) -> None:
    with unread_export(proxy, sandbox, seeded), unread_export(proxy, sandbox, seeded):
        time.sleep(1)  # buffered, nginx would have read both whole by now and freed the slots
        assert_error(export(proxy, sandbox, seeded), 409, "LIMIT_EXCEEDED")
        freed = answered_within(proxy, sandbox, seeded, STALL_SECONDS + 5)
        assert freed.status_code == 200 and freed.text.count("\n") == ROWS
        assert freed.headers.get("x-accel-buffering") is None, "nginx keeps payorch's header to itself"
