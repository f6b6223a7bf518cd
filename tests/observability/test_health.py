"""/healthz and /readyz through HTTP, on SQLite and PostgreSQL, and when things are wrong."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from alembic import command

from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.db.migrate import alembic_config
from payorch.runtime import Runtime
from tests.kit import make_settings, refused_address


async def serve(database_url: str) -> tuple[httpx.AsyncClient, Runtime]:
    runtime = build_runtime(make_settings(database_url))
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver"), runtime


@pytest.fixture
async def broken() -> AsyncIterator[httpx.AsyncClient]:
    with refused_address() as address:  # nothing listens there: the database is unreachable
        client, runtime = await serve(f"postgresql://postgres@{address}/nothing")
        async with client:
            yield client
        await runtime.close()


async def test_healthz_answers_without_the_database(
    client: httpx.AsyncClient, broken: httpx.AsyncClient
) -> None:
    for http in (client, broken):
        response = await http.get("/healthz")
        assert response.status_code == 200 and response.json() == {"status": "ok"}


async def test_readyz_is_200_on_a_migrated_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "checks": {"database": "ok", "migrations": "current"},
    }


def assert_not_ready(response: httpx.Response, database: str, migrations: str) -> None:
    assert response.status_code == 503
    error = response.json()["error"]
    assert set(error) == {"code", "message", "request_id", "details"}
    assert error["code"] == "NOT_READY"
    assert error["request_id"] in response.headers.get_list("x-request-id")
    assert error["details"] == {"database": database, "migrations": migrations}


async def test_readyz_is_503_when_the_database_is_unreachable(broken: httpx.AsyncClient) -> None:
    assert_not_ready(await broken.get("/readyz"), "unreachable", "unknown")


@pytest.mark.parametrize("revision", [None, "0001", "0004"])
async def test_readyz_is_503_until_migrations_are_current(tmp_path: Path, revision: str | None) -> None:
    url = f"sqlite:///{tmp_path / 'behind.db'}"
    if revision is not None:
        import threading

        thread = threading.Thread(target=command.upgrade, args=(alembic_config(url), revision))
        thread.start()
        thread.join()
    client, runtime = await serve(url)
    async with client:
        assert_not_ready(await client.get("/readyz"), "ok", "behind")
        from payorch.db.migrate import upgrade_in_thread

        upgrade_in_thread(url)
        assert (await client.get("/readyz")).status_code == 200
    await runtime.close()


async def test_x_request_id_is_sent_once_on_errors(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/payment-intents/payi_x")
    assert response.status_code == 401
    assert len(response.headers.get_list("x-request-id")) == 1


async def test_x_request_id_is_sent_once_on_success(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz", headers={"X-Request-Id": "req-from-the-balancer"})
    assert response.headers.get_list("x-request-id") == ["req-from-the-balancer"]
