"""Restricted and expiring API keys through HTTP, on SQLite and PostgreSQL: what creating one
refuses (unknown, empty or repeated scopes; an expiry in the past or without its zone), the
answer and the list (scopes, expires_at, last_used_at), expiry refused as a revocation is, the
last use written at most once a minute and off the request, and a key never granting more than
its creator holds."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from payorch.access.scopes import SCOPES
from payorch.auth import repository
from payorch.clock import FrozenClock, isoformat
from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in_with
from tests.kit import Sandbox, assert_error

KEYS = "/v1/admin/api-credentials"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def create(client: httpx.AsyncClient, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    answer = await client.post(KEYS, json=body, headers=headers)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


async def listed(client: httpx.AsyncClient, sandbox: Sandbox) -> dict[str, dict[str, Any]]:
    answer = await client.get(KEYS, headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    return {item["id"]: item for item in answer.json()["items"]}


async def test_a_restricted_expiring_key_is_answered_and_listed_with_its_scopes(
    client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock
) -> None:
    expiry = clock.now() + timedelta(days=30)
    created = await create(
        client,
        sandbox.headers,
        name="reports",
        # Given in any order, kept in the table's order.
        scopes=["payments:read", "payment_intents:read"],
        expires_at=expiry.isoformat(),
    )
    assert set(created) == {
        "id", "name", "prefix", "environment", "api_key", "created_at",
        "scopes", "expires_at", "last_used_at",
    }  # fmt: skip
    assert created["scopes"] == ["payment_intents:read", "payments:read"]
    assert created["expires_at"] == isoformat(expiry)
    assert created["last_used_at"] is None
    item = (await listed(client, sandbox))[created["id"]]
    assert item["scopes"] == created["scopes"] and item["expires_at"] == isoformat(expiry)
    assert item["last_used_at"] is None
    # The sandbox's own key (made without scopes) holds every scope, and never expires.
    others = [i for i in (await listed(client, sandbox)).values() if i["id"] != created["id"]]
    assert [(i["scopes"], i["expires_at"]) for i in others] == [(None, None)]
    # The restricted key reads payments, and nothing outside its scopes.
    assert (await client.get("/v1/payments", headers=bearer(created["api_key"]))).status_code == 200
    refused = await client.get("/v1/admin/webhook-endpoints", headers=bearer(created["api_key"]))
    error = assert_error(refused, 403, "FORBIDDEN")
    assert error["details"] == {"required_scope": "webhooks:read"}
    assert "webhooks:read" in error["message"]


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"scopes": ["payments:read", "payments:wrote"]}, "scopes[1]", "unknown scope 'payments:wrote'"),
        ({"scopes": []}, "scopes", "at least one scope"),
        ({"scopes": ["payments:read", "events:read", "payments:read"]}, "scopes[2]", "named twice"),
        ({"scopes": "payments:read"}, "scopes", ""),
        ({"expires_at": "2020-01-01T00:00:00Z"}, "expires_at", "in the future"),
        ({"expires_at": "2099-01-01"}, "expires_at", "RFC 3339"),
        ({"expires_at": "2099-01-01T00:00:00"}, "expires_at", "RFC 3339"),
        ({"expires_at": "20990101T000000Z"}, "expires_at", "RFC 3339"),
        ({"expires_at": "2099-02-30T00:00:00Z"}, "expires_at", "RFC 3339"),
    ],
)
async def test_bad_scopes_or_expiry_are_refused_and_create_nothing(
    client: httpx.AsyncClient, sandbox: Sandbox, body: dict[str, Any], field: str, words: str
) -> None:
    answer = await client.post(KEYS, json=body, headers=sandbox.headers)
    error = assert_error(answer, 400, "VALIDATION_ERROR")
    [problem] = error["details"]["errors"]
    assert problem["field"] == field and words in problem["message"], problem
    if "unknown" in words:
        assert all(scope in problem["message"] for scope in SCOPES)  # the known ones, named
    assert len(await listed(client, sandbox)) == 1  # the sandbox's own key only


async def test_an_expired_key_is_refused_as_a_revoked_one(
    client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock
) -> None:
    expiry = clock.now() + timedelta(seconds=60)
    created = await create(client, sandbox.headers, expires_at=isoformat(expiry))
    headers = bearer(created["api_key"])
    assert (await client.get("/v1/payments", headers=headers)).status_code == 200
    clock.advance(59)
    assert (await client.get("/v1/payments", headers=headers)).status_code == 200
    clock.advance(1)  # the cached key too: expiry is checked on every request
    refused = await client.get("/v1/payments", headers=headers)
    error = assert_error(refused, 401, "AUTHENTICATION_FAILED")
    assert f"expired at {isoformat(expiry)}" in error["message"]
    assert refused.headers["www-authenticate"] == "Bearer"
    # Refused for writes as well; the other keys are untouched.
    assert_error(await client.post(KEYS, headers=headers), 401, "AUTHENTICATION_FAILED")
    assert (await client.get("/v1/payments", headers=sandbox.headers)).status_code == 200


async def test_last_use_is_written_at_most_once_a_minute_and_not_by_the_request(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    created = await create(client, sandbox.headers, scopes=["payments:read"])
    headers = bearer(created["api_key"])
    writes: list[str] = []
    touch = repository.touch

    async def counted(*args: Any) -> None:
        writes.append(args[1])
        await touch(*args)

    monkeypatch.setattr(repository, "touch", counted)
    first_use = clock.now()
    for turn in range(20):
        assert (await client.get("/v1/payments", headers=headers)).status_code == 200
        clock.advance(2)  # 40 s in all
        if turn % 3 == 0:  # as when the 5 s cache entry expires: the key is read again
            runtime.authenticator.forget(created["prefix"])
    await runtime.authenticator.drain()
    assert writes == [created["id"]]  # once, for twenty requests in the minute
    item = (await listed(client, sandbox))[created["id"]]
    assert item["last_used_at"] == isoformat(first_use)

    clock.advance(21)  # 61 s after the first use
    assert (await client.get("/v1/payments", headers=headers)).status_code == 200
    await runtime.authenticator.drain()
    assert len([w for w in writes if w == created["id"]]) == 2
    item = (await listed(client, sandbox))[created["id"]]
    assert item["last_used_at"] == isoformat(clock.now())


async def test_a_key_grants_no_more_than_its_creator_holds(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    creator = await create(
        client, sandbox.headers, scopes=["api_keys:write", "api_keys:read", "payments:read"]
    )
    headers = bearer(creator["api_key"])
    # A subset, or all of its own: allowed.
    narrower = await create(client, headers, scopes=["payments:read"])
    assert narrower["scopes"] == ["payments:read"]
    await create(client, headers, scopes=["api_keys:write", "api_keys:read", "payments:read"])
    count = len(await listed(client, sandbox))
    # One scope more: refused, naming it.
    more = await client.post(KEYS, json={"scopes": ["payments:read", "refunds:write"]}, headers=headers)
    error = assert_error(more, 403, "FORBIDDEN")
    assert error["details"] == {"required_scope": "refunds:write"}
    assert "refunds:write" in error["message"]
    # No list means every scope: refused, naming the first it lacks in the table's order.
    every = await client.post(KEYS, headers=headers)
    error = assert_error(every, 403, "FORBIDDEN")
    assert error["details"] == {"required_scope": next(iter(SCOPES))}
    assert len(await listed(client, sandbox)) == count  # nothing created
    # A key made without scopes creates any.
    assert (await create(client, sandbox.headers, scopes=list(SCOPES)))["scopes"] == list(SCOPES)


@pytest.mark.settings(dashboard_key_sign_in=True)  # a SANDBOX key signs in
async def test_a_restricted_key_cannot_sign_in_to_the_dashboard(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    """A dashboard session holds no key's scopes: a restricted key is refused there, rather than
    acting with every scope."""
    created = await create(client, sandbox.headers, scopes=["payments:read"])
    answer = await sign_in_with(client, created["api_key"])
    assert answer.status_code == 403 and "A key with scopes cannot sign in" in answer.text
    assert "set-cookie" not in answer.headers or "payorch_session" not in answer.headers["set-cookie"]
    assert (await client.get("/dashboard/overview")).status_code == 303  # still signed out


@pytest.mark.settings(dashboard_key_sign_in=True)  # a SANDBOX key signs in
async def test_a_dashboard_session_ends_when_its_key_expires(
    client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock
) -> None:
    created = await create(client, sandbox.headers, expires_at=isoformat(clock.now() + timedelta(hours=1)))
    assert (await sign_in_with(client, created["api_key"])).status_code == 303
    for _ in range(5):  # page views every 10 minutes: the session is not idle
        clock.advance(600)
        assert (await client.get("/dashboard/overview")).status_code == 200
    clock.advance(600)
    assert (await client.get("/dashboard/overview")).status_code == 303  # back to sign-in
