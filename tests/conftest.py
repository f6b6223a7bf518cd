"""Shared fixtures: every test that uses `client` runs on SQLite and on PostgreSQL.

The databases are made in tests/databases.py: one copy of a migrated template per backend and
session (and per xdist worker), or a fresh one for a module that runs database-wide jobs. Tests
isolate themselves by creating their own application (every query is scoped to one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest

from payorch.app import create_app
from payorch.applications.service import create_application
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.db import Database
from payorch.http.client import LocalApp
from payorch.payments.refund_gateway import RefundGateway
from payorch.providers.health import ProviderHealth
from payorch.runtime import Runtime
from payorch.webhooks.urls import Resolver

TEST_SECRET_KEY = "test-secret-key-0123456789abcdef0123456789"
# The databases (`backend`, `database_url`, `database`, `own_database_url`) live in tests/databases.py.
pytest_plugins = ["tests.databases"]


def make_settings(database_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "database_url": database_url,
        "secret_key": TEST_SECRET_KEY,
        "public_url": "http://testserver",
        # Webhook tests deliver to receivers on loopback: allowed explicitly, on both databases
        # (its default is off for PostgreSQL); tests of the setting override it.
        "sandbox_webhooks_allow_private": True,
        # Tests sharing the machine's Redis test sharing, not an outage: a busy machine can stall
        # a reply past the 50 ms default and open the circuit. Outage tests set their own.
        "redis_timeout_seconds": 1.0,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    """Override in a test module to change settings for its app."""
    return {}


@pytest.fixture
def local_app() -> LocalApp | None:
    """Override to give the runtime the ASGI app its in-process calls go to (default: the first
    app built over it)."""
    return None


@pytest.fixture
def provider_health() -> ProviderHealth | None:
    """Override to give the runtime another provider-health store (default: in-process)."""
    return None


@pytest.fixture
def refund_gateway() -> RefundGateway | None:
    """Override to give the runtime a fake refund gateway (default: the provider adapters)."""
    return None


@pytest.fixture
def webhook_resolver() -> Resolver | None:
    """Override (or parametrize) to give the runtime a fake DNS for webhook URLs."""
    return None


@pytest.fixture
async def runtime(
    database_url: str,
    database: Database,
    clock: FrozenClock,
    settings_overrides: dict[str, object],
    local_app: LocalApp | None,
    provider_health: ProviderHealth | None,
    refund_gateway: RefundGateway | None,
    webhook_resolver: Resolver | None,
) -> AsyncIterator[Runtime]:
    rt = build_runtime(
        make_settings(database_url, **settings_overrides),
        clock=clock,
        database=database,
        local_app=local_app,
        provider_health=provider_health,
        refund_gateway=refund_gateway,
        webhook_resolver=webhook_resolver,
    )
    yield rt
    await rt.close()


@pytest.fixture
async def client(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(runtime=runtime)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@dataclass
class Sandbox:
    application_id: str
    merchant_account_id: str
    api_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}


async def new_application(runtime: Runtime, environment: str = "SANDBOX") -> Sandbox:
    async with runtime.database.transaction() as conn:
        created = await create_application(
            conn, runtime.clock, name="test", environment=environment, merchant_name="shop"
        )
    return Sandbox(created.application_id, created.merchant_account_id, created.api_key)


@pytest.fixture
async def sandbox(runtime: Runtime) -> Sandbox:
    return await new_application(runtime)


@pytest.fixture
def intent_body(sandbox: Sandbox) -> dict[str, object]:
    return {
        "merchant_account_id": sandbox.merchant_account_id,
        "external_reference": "order-1",
        "amount": 1500,
        "currency": "CLP",
        "return_url": "https://shop.example/return",
    }


@pytest.fixture(scope="session")
def anyio_backend() -> Iterator[str]:
    yield "asyncio"
