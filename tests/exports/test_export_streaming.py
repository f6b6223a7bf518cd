"""Exports against a live `payorch serve` (SQLite and PostgreSQL): an application streams at most
PAYORCH_MAX_CONCURRENT_EXPORTS at once (one more: 409 LIMIT_EXCEEDED, another application is
not held up), a slot comes back when an export is read to its end or its client goes away, and
a reader that takes nothing is dropped after PAYORCH_EXPORT_STALL_SECONDS, freeing its slot."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from payorch.runtime import Runtime
from tests.exports.helpers import ROWS, answered_within, export, seed, server_holds, unread_export
from tests.kit import Sandbox, assert_error, new_application
from tests.live import live_server, payorch_env

pytestmark = pytest.mark.slow

CAP = 2
STALL_SECONDS = 2


@pytest.fixture(scope="module")
def live_url(database_url: str) -> Iterator[str]:
    env = payorch_env(
        database_url,
        PAYORCH_MAX_CONCURRENT_EXPORTS=str(CAP),
        PAYORCH_EXPORT_STALL_SECONDS=str(STALL_SECONDS),
    )
    with live_server(env, "--no-worker") as url:
        yield url


@pytest.fixture
async def seeded(runtime: Runtime, sandbox: Sandbox) -> str:
    return await seed(runtime, sandbox)


async def test_one_more_than_the_cap_is_409_and_slots_come_back_after_completion_and_disconnect(
    runtime: Runtime, sandbox: Sandbox, seeded: str, live_url: str
) -> None:
    other = await new_application(runtime)
    with unread_export(live_url, sandbox, seeded):
        # Completion frees a slot: with one held, two whole exports one after the other fit.
        for _ in range(2):
            whole = export(live_url, sandbox, seeded)
            assert whole.status_code == 200 and whole.text.count("\n") == ROWS
        with unread_export(live_url, sandbox, seeded) as second:
            error = assert_error(export(live_url, sandbox, seeded), 409, "LIMIT_EXCEEDED")
            assert error["details"] == {"limit": CAP, "current": CAP}
            assert "at most 2" in error["message"]
            # Another application's exports are its own.
            assert export(live_url, other, seeded).status_code == 200
            second.close()  # the client goes away mid-export
            # Its slot comes back once the server sees the connection gone.
            freed = answered_within(live_url, sandbox, seeded, 5)
            assert freed.status_code == 200 and freed.text.count("\n") == ROWS


async def test_a_reader_that_takes_nothing_is_dropped_and_its_slot_freed(
    sandbox: Sandbox, seeded: str, live_url: str
) -> None:
    with unread_export(live_url, sandbox, seeded) as first, unread_export(live_url, sandbox, seeded):
        assert_error(export(live_url, sandbox, seeded), 409, "LIMIT_EXCEEDED")
        assert server_holds(first)
        time.sleep(STALL_SECONDS + 1)
        # Both stalled exports were ended and their connections dropped by the server (closed,
        # not waiting for the reader to take what it had buffered): a reader arriving now finds
        # what the kernel held, then the end of the connection, not the end of the export.
        assert not server_holds(first)
        received = b""
        first.settimeout(5)
        try:
            while chunk := first.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass
        assert received.count(b"\n") < ROWS / 2 and not received.endswith(b"0\r\n\r\n")
        freed = answered_within(live_url, sandbox, seeded, 3)
        assert freed.status_code == 200 and freed.text.count("\n") == ROWS
