"""Shared fixtures: every test that uses `client` runs on SQLite and on PostgreSQL.

The databases are made in tests/databases.py: one copy of a migrated template per backend and
session (and per xdist worker), or a fresh one for a module that runs database-wide jobs. Tests
isolate themselves by creating their own application (every query is scoped to one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.db import Database
from payorch.http.client import LocalApp
from payorch.payments.refund_gateway import RefundGateway
from payorch.providers.health import ProviderHealth
from payorch.runtime import Runtime
from payorch.simulator.outbox import sender
from payorch.users import passwords
from payorch.webhooks.urls import Resolver
from tests import kit
from tests.browser import close_shared
from tests.kit import Sandbox, make_settings, new_application

# The databases (`backend`, `database_url`, `database`, `own_database_url`) live in tests/databases.py.
pytest_plugins = ["tests.databases"]


# A page in a real browser (`e2e`) runs on PostgreSQL only: what the page shows comes through the
# same repositories that the dashboard's HTTP tests (tests/dashboard/test_*.py without _browser)
# and the API tests run on both databases; the browser adds the page, not the database, and a
# browser test costs 15-100 s of a worker. `both_databases` keeps both (the e2e shop, one walk
# per provider, is the check that a `make run` server on SQLite takes a buyer end to end).
BROWSER_DATABASE = "postgres"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("backend") if callspec is not None else None
        one_database = (
            item.get_closest_marker("e2e") is not None
            and item.get_closest_marker("both_databases") is None
        )
        (dropped if one_database and backend not in (None, BROWSER_DATABASE) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    # Modules that start a process or a browser (`slow`) first, each module's tests together and
    # in their order: xdist (--dist loadfile) hands out modules in this order, so the long ones
    # start early and short ones fill the end, instead of one worker finishing a 2-minute module
    # alone (the image build, schemathesis' all checks).
    heavy = {item.module.__name__ for item in kept if item.get_closest_marker("slow") and item.module}
    kept.sort(key=lambda item: 0 if item.module and item.module.__name__ in heavy else 1)
    items[:] = kept


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, object]:
    """The settings a test's app changes: ``pytest.mark.settings(name=value, ...)`` on the test or
    its module (the closest mark wins); a module whose values need another fixture overrides
    this fixture instead."""
    return kit.marked_settings(request)


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

    async def settled(response: httpx.Response) -> None:
        # A key's last use is written by a task after the answer (payorch.auth.service). On
        # SQLite that task holds the write lock until its COMMIT, which needs this event loop:
        # a test that then blocks the loop while a command-line process of its own runs would
        # leave the lock held and the process waiting 30 s for it. A server's loop never blocks.
        await runtime.authenticator.drain()

    async with httpx.AsyncClient(
        transport=transport, base_url="http://testserver", event_hooks={"response": [settled]}
    ) as http:
        yield http


@pytest.fixture
def brisk_quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator's quick retries of a notification 10 ms apart, not 0.3 s then 1 s (same
    three attempts, each reading its record again). For a module whose notices fail under a fault
    held for the whole request that sent them (an outside request waits for its notices): nothing
    can clear between the attempts, so the pauses only cost 1.3 s a failed notice."""
    monkeypatch.setattr(sender, "QUICK_RETRIES", (0.0, 0.01, 0.01))


# Each password's argon2 hash, made once per process (``passwords_hashed_once``).
_HASHED: dict[str, str] = {}
_HASH_PASSWORD = passwords.hash_password


def _hashed_once(password: str) -> str:
    passwords.check(password)  # its rules, at every call
    if password not in _HASHED:
        _HASHED[password] = _HASH_PASSWORD(password)
    return _HASHED[password]


@pytest.fixture
def passwords_hashed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A password set through the users' service is hashed once per process, then that hash
    is stored again (a real argon2id hash of it, salt shared): for a module that makes a person
    in each test only to be signed in (an argon2 hash is about 0.2 s of CPU), not one about
    passwords."""
    monkeypatch.setattr(passwords, "hash_password", _hashed_once)


@pytest.fixture
async def sandbox(runtime: Runtime) -> Sandbox:
    return await new_application(runtime)


@pytest.fixture
def intent_body(sandbox: Sandbox) -> dict[str, object]:
    return kit.intent_body(sandbox)


@pytest.fixture(scope="session", autouse=True)
async def _shared_browser_closed_at_the_end() -> AsyncIterator[None]:
    """The worker's shared browser (tests/browser.py), if a test opened it, closes last."""
    yield
    await close_shared()


@pytest.fixture(scope="session")
def anyio_backend() -> Iterator[str]:
    yield "asyncio"
