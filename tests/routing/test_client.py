"""The client's routing methods against the real app: async over ASGI, sync over a live
`payorch serve` (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from payorch.app import create_app
from payorch.client import AsyncPayorchClient, InvalidRequestError, PayorchClient
from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.live import live_server, payorch_env
from tests.providers.helpers import A, B
from tests.routing.helpers import C

pytestmark = pytest.mark.slow

RULES = [{"name": "usd", "if": {"currency": ["USD"]}, "then": {"priority": [C, B]}}]


@pytest.fixture(scope="module")
def live_url(database_url: str) -> Iterator[str]:
    with live_server(payorch_env(database_url), "--no-worker") as url:
        yield url


async def test_async_routing_methods(runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    mrc = sandbox.merchant_account_id
    async with AsyncPayorchClient(sandbox.api_key, "http://testserver", transport=transport) as client:
        assert (await client.get_routing(mrc)).version is None
        saved = await client.replace_routing(mrc, rules=RULES)
        assert saved.version == 1 and saved.active and saved.rules == RULES
        await client.replace_routing(mrc, rules=[], default="priority")
        page = await client.list_routing_versions(mrc, limit=1)
        assert [v.version for v in page.items] == [2] and page.next_cursor == "2"
        assert (await client.activate_routing_version(mrc, 1)).version == 1
        decided = await client.evaluate_routing(mrc, amount=100, currency="USD")
        assert decided.provider == C and decided.routing.rule == "usd" and decided.routing.version == 1
        with pytest.raises(InvalidRequestError) as refused:
            await client.replace_routing(
                mrc, rules=[{"name": "a", "if": {"currency": ["USD"]}, "then": {"priority": [A]}}]
            )
        assert refused.value.code == "VALIDATION_ERROR"
        intent = await client.create_payment_intent(
            merchant_account_id=mrc,
            external_reference="o",
            amount=100,
            currency="USD",
            return_url="https://shop.example/r",
        )
        started = await client.create_checkout(intent.id)
        assert started.routing is not None and started.routing.chosen == C
        read = await client.get_payment_intent(intent.id)
        assert read.routing is not None and read.routing.rule == "usd"


async def test_sync_routing_methods(live_url: str, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    mrc = sandbox.merchant_account_id
    with PayorchClient(sandbox.api_key, live_url) as client:
        saved = client.replace_routing(mrc, rules=RULES)
        assert saved.version == 1 and client.get_routing(mrc).rules == RULES
        assert [v.version for v in client.list_routing_versions(mrc).items] == [1]
        assert client.activate_routing_version(mrc, 1).active
        decided = client.evaluate_routing(mrc, amount=100, currency="USD", provider=B)
        assert decided.provider == B and decided.routing.strategy == "explicit"
