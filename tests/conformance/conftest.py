"""The conformance kit: every case runs for every registered provider (providers/registry.py),
against its simulator, on SQLite and PostgreSQL. A new provider gets them all by being
registered and declaring its driver (payorch.simulator.<name>.conformance)."""

from __future__ import annotations

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.http.client import LocalApp
from payorch.providers.registration import ProviderRegistration
from payorch.providers.registry import PROVIDER_IDS, registration_of
from payorch.runtime import Runtime
from tests.conformance.kit import Shop, driver_of
from tests.conformance.network import Network
from tests.conformance.timeouts import provider_timeout
from tests.kit import mock_sandbox


@pytest.fixture(params=PROVIDER_IDS)
def provider(request: pytest.FixtureRequest) -> ProviderRegistration:
    return registration_of(str(request.param))


@pytest.fixture
def network() -> Network:
    return Network()


@pytest.fixture
def local_app(network: Network) -> LocalApp:
    return network


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, object]:
    # The kit's cases run back to back (provider D's decline table is 45 rows, about five requests
    # each): the per-application rate limit is not what it tests.
    return {"provider_timeout_seconds": provider_timeout(request), "rate_limit": "100000/second"}


@pytest.fixture
async def shop(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: FrozenClock,
    network: Network,
    provider: ProviderRegistration,
) -> Shop:
    """A sandbox application with a MOCK connector for every registered provider."""
    sandbox = await mock_sandbox(runtime)
    return Shop(client, runtime, clock, network, sandbox, provider, driver_of(provider))
