"""The origin and actor of an activity entry: the request's client address, User-Agent (cut to
512 characters) and request id, read by payorch.activity.service.record when a change names no
origin; the actor from the caller (a key, a person, the operator's command line)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select

from payorch.activity.actors import actor_of
from payorch.activity.records import Actor, Change
from payorch.activity.service import record
from payorch.auth.service import OPERATOR, Caller
from payorch.db.tables.activity import activity_log
from payorch.runtime import Runtime
from tests.kit import ENDPOINTS, Sandbox

LONG_AGENT = "agent/" + "x" * 600


async def entries(runtime: Runtime, application_id: str) -> list[Any]:
    async with runtime.database.reading() as conn:
        query = select(activity_log).where(activity_log.c.application_id == application_id)
        return list((await conn.execute(query.order_by(activity_log.c.seq))).all())


async def test_an_entry_names_the_request_s_origin_and_the_key(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = {**sandbox.headers, "User-Agent": LONG_AGENT, "X-Request-Id": "req-origin-1"}
    response = await client.post(
        ENDPOINTS, json={"url": "https://hooks.example/in?token=t0k"}, headers=headers
    )
    assert response.status_code == 201, response.text
    key = await runtime.authenticator.authenticate(f"Bearer {sandbox.api_key}")
    [entry] = await entries(runtime, sandbox.application_id)
    assert (entry.actor_type, entry.actor_id, entry.actor_email) == ("api_key", key.credential_id, None)
    assert entry.origin_ip == "127.0.0.1"  # httpx's ASGI transport's peer
    assert entry.origin_user_agent == LONG_AGENT[:512]
    assert entry.request_id == "req-origin-1" == response.headers["x-request-id"]
    # The URL's path and query may hold the receiver's token: only its origin is logged.
    assert entry.changes["url"] == "https://hooks.example"


async def test_a_request_id_longer_than_the_column_is_cut(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    # The API takes request ids of up to 128 characters; the log's column holds 64.
    long_id = "r" * 128
    headers = {**sandbox.headers, "X-Request-Id": long_id}
    response = await client.post(ENDPOINTS, json={"url": "https://hooks.example/in"}, headers=headers)
    assert response.status_code == 201, response.text
    [entry] = await entries(runtime, sandbox.application_id)
    assert entry.request_id == long_id[:64]
    assert entry.origin_user_agent.startswith("python-httpx/")


async def test_outside_a_request_the_origin_is_empty(runtime: Runtime, sandbox: Sandbox) -> None:
    change = Change(sandbox.application_id, Actor("system", "reconciliation"), "test.done", "test", "t_1")
    async with runtime.database.transaction() as conn:
        await record(conn, runtime.clock, change)
    [entry] = await entries(runtime, sandbox.application_id)
    assert (entry.origin_ip, entry.origin_user_agent, entry.request_id) == (None, None, None)
    assert (entry.actor_type, entry.actor_id) == ("system", "reconciliation")


@pytest.mark.parametrize(
    ("caller", "actor"),
    [
        (Caller("app_1", "SANDBOX", "key_1"), Actor("api_key", "key_1")),
        (
            Caller("app_1", "SANDBOX", "", frozenset(), user_id="usr_1", email="a@shop.example"),
            Actor("user", "usr_1", "a@shop.example"),
        ),
        (Caller("app_1", "SANDBOX", OPERATOR), Actor("system", "operator")),
    ],
)
def test_the_actor_of_each_kind_of_caller(caller: Caller, actor: Actor) -> None:
    assert actor_of(caller) == actor
