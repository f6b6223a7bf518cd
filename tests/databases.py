"""The test databases (a pytest plugin loaded by tests/conftest.py).

Every test that uses `database_url` runs on SQLite and on PostgreSQL (the `backend` parameter).
Per backend and per test session (and xdist worker) one database is migrated once and kept as a
template; the tests share a copy of it. Tests isolate themselves by creating their own
application (every query is scoped to one), so no table is truncated between tests.

A module whose tests run a database-wide job (webhook deliveries, checkout expiry,
reconciliation, refund resolution, simulator notifications) sweeps every row, not only its own
application's: it opts into a fresh copy of the template by overriding `database_url`::

    from tests.databases import own_database
    database_url = own_database  # <the job> sweeps the database: this module gets its own

PostgreSQL copies with `CREATE DATABASE ... TEMPLATE` (no migration run); SQLite copies the file.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from payorch.db import Database
from payorch.db.migrate import upgrade_in_thread
from tests.needs import missing

BACKENDS = ["sqlite", "postgres"]
PG_CANDIDATES = [
    os.environ.get("PAYORCH_TEST_POSTGRES_URL", ""),
    "postgresql://postgres@127.0.0.1:5432/test",
    "postgresql://root@127.0.0.1:5432/test",
]


async def _admin_postgres_url() -> tuple[str | None, str]:
    reasons = []
    for url in filter(None, PG_CANDIDATES):
        try:
            conn = await asyncpg.connect(url, timeout=3)
        except Exception as exc:  # noqa: BLE001 - we report every reason below
            reasons.append(f"{url}: {exc}")
            continue
        await conn.close()
        return url, ""
    return None, "; ".join(reasons)


async def create_postgres_database(template: str | None = None) -> tuple[str, str]:
    """A new database, empty or a copy of `template` (a database name): (its URL, the admin
    URL to drop it with). Names carry the xdist worker, so parallel workers never collide."""
    admin, reason = await _admin_postgres_url()
    if admin is None:
        missing(f"PostgreSQL is unreachable ({reason})")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"payorch_test_{worker}_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(admin)
    try:
        copy = f' TEMPLATE "{template}"' if template else ""
        await conn.execute(f'CREATE DATABASE "{name}"{copy}')
    finally:
        await conn.close()
    return admin.rsplit("/", 1)[0] + "/" + name, admin


async def drop_postgres_database(url: str, admin: str) -> None:
    name = url.rsplit("/", 1)[1]
    conn = await asyncpg.connect(admin)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def _copy_sqlite(template: str, target: Path) -> str:
    source = Path(template.split(":///", 1)[1])
    for suffix in ("", "-wal"):  # a WAL not yet checkpointed holds committed pages
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
    return f"sqlite:///{target}"


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
async def template_database_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """A migrated database nobody connects to: the source of every copy."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('template') / 'payorch.db'}"
        upgrade_in_thread(url)
        yield url
        return
    url, admin = await create_postgres_database()
    try:
        upgrade_in_thread(url)  # disposes its engine: no connection stays on the template
        yield url
    finally:
        await drop_postgres_database(url, admin)


async def _copy_of_template(template: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    if template.startswith("sqlite"):
        yield _copy_sqlite(template, tmp_path_factory.mktemp("db") / "payorch.db")
        return
    url, admin = await create_postgres_database(template=template.rsplit("/", 1)[1])
    try:
        yield url
    finally:
        await drop_postgres_database(url, admin)


@pytest.fixture(scope="session")
async def shared_database_url(
    template_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    async for url in _copy_of_template(template_database_url, tmp_path_factory):
        yield url


@pytest.fixture(scope="session")
async def shared_database(shared_database_url: str) -> AsyncIterator[Database]:
    db = Database(shared_database_url)
    yield db
    await db.dispose()


@pytest.fixture(scope="module")
async def own_database_url(
    template_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    """A fresh migrated database for one module (see the module docstring to opt in)."""
    async for url in _copy_of_template(template_database_url, tmp_path_factory):
        yield url


@pytest.fixture(scope="module")
def own_database(own_database_url: str) -> str:
    """Assigned to `database_url` in a module that opts in (see the module docstring)."""
    return own_database_url


@pytest.fixture(scope="module")
def database_url(shared_database_url: str) -> str:
    """The database of the tests of a module: the shared copy unless the module overrides it."""
    return shared_database_url


@pytest.fixture(scope="module")
async def database(
    database_url: str, shared_database_url: str, shared_database: Database
) -> AsyncIterator[Database]:
    if database_url == shared_database_url:
        yield shared_database
        return
    db = Database(database_url)
    yield db
    await db.dispose()


@pytest.fixture(params=BACKENDS)
async def fresh_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A database nothing has touched: no file yet, or an empty PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/fresh.db"
        return
    url, admin = await create_postgres_database()
    try:
        yield url
    finally:
        await drop_postgres_database(url, admin)
