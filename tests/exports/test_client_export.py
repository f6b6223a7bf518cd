"""The client's export: the sync client streams a live `payorch serve`'s CSV into csv.reader,
the async one JSON lines over ASGI; a value with line breaks inside stays one value."""

from __future__ import annotations

import csv
import json
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta

import httpx
import pytest

from payorch.app import create_app
from payorch.client import AsyncPayorchClient, NotFoundError, PayorchClient
from payorch.runtime import Runtime
from tests.kit import Sandbox, authorized_payment
from tests.live import live_server, payorch_env

pytestmark = pytest.mark.slow

# Breaks that split a line for str.splitlines (and httpx's iter_lines), inside one value.
BROKEN = "first\nsecond\rthird\u2028fourth\x1cfifth"


@pytest.fixture(scope="module")
def live_url(database_url: str) -> Iterator[str]:
    with live_server(payorch_env(database_url), "--no-worker") as url:
        yield url


@pytest.fixture
async def async_client(runtime: Runtime, sandbox: Sandbox) -> AsyncIterator[AsyncPayorchClient]:
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    async with AsyncPayorchClient(sandbox.api_key, "http://testserver", transport=transport) as c:
        yield c


async def test_the_sync_client_streams_csv_lines_that_csv_reader_reads(
    runtime: Runtime, sandbox: Sandbox, live_url: str
) -> None:
    now = runtime.clock.now()
    made = [
        await authorized_payment(runtime, sandbox, amount=100 + i, external_reference=reference)
        for i, reference in enumerate([BROKEN, "=1+1", "plain"])
    ]
    with PayorchClient(sandbox.api_key, live_url) as client:
        lines = list(
            client.export("payments", from_=now - timedelta(minutes=1), to=now + timedelta(minutes=1))
        )
        header, *rows = list(csv.reader(lines))
        with pytest.raises(NotFoundError) as refused:
            list(client.export("chargebacks", from_=now, to=now + timedelta(seconds=1)))
        # `to` before `from`: an empty range, the header alone (as the lists read it).
        assert list(client.export("payments", from_=now, to=now - timedelta(seconds=1))) == lines[:1]
    assert all(line.endswith("\n") for line in lines)
    assert [row[header.index("payment_id")] for row in rows] == [paid.payment_id for paid in made]
    assert [row[header.index("external_reference")] for row in rows] == [BROKEN, "'=1+1", "plain"]
    assert refused.value.code == "RESOURCE_NOT_FOUND" and refused.value.status_code == 404


async def test_the_async_client_streams_json_lines(
    runtime: Runtime, sandbox: Sandbox, async_client: AsyncPayorchClient
) -> None:
    now = runtime.clock.now()
    paid = await authorized_payment(runtime, sandbox, amount=4321, currency="USD", external_reference=BROKEN)
    lines = [
        line
        async for line in async_client.export(
            "payments", from_=now - timedelta(minutes=1), to=now + timedelta(minutes=1), format="jsonl"
        )
    ]
    [row] = [json.loads(line) for line in lines]
    assert (row["payment_id"], row["external_reference"], row["amount"]) == (paid.payment_id, BROKEN, 4321)
    assert row["amount_formatted"] == "$43.21"
