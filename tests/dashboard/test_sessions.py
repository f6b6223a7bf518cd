"""Dashboard sign-in, sessions (idle and absolute expiry), CSRF and the 404 page, over plain HTTP
on SQLite and PostgreSQL. The sign-in steps themselves: test_sign_in.py."""

from __future__ import annotations

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from tests.dashboard.signing import (
    assert_back_to_sign_in,
    code_now,
    csrf_of,
    password_step,
    person_of,
    second_factor_step,
    sign_in,
    sign_in_with,
)
from tests.kit import Sandbox, new_application


async def test_sign_in_sets_a_guarded_session_cookie_and_pages_refuse_framing(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    await sign_in(client, sandbox)
    client.cookies.clear()
    person = person_of(sandbox)
    first = await password_step(client, person.email, person.password)
    assert first.status_code == 303
    second = await second_factor_step(client, code_now(client, person.totp_secret))
    assert second.status_code == 303
    for answer in (first, second):
        cookie = answer.headers["set-cookie"].lower()
        assert "payorch_session=" in cookie and "httponly" in cookie and "samesite=lax" in cookie
        assert "secure" not in cookie  # PAYORCH_PUBLIC_URL is http here
    overview = await client.get("/dashboard/overview")
    assert overview.status_code == 200
    policy = overview.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert overview.headers["x-frame-options"] == "DENY"
    assert "<script>" not in overview.text  # no inline script
    assert "Overview" in overview.text


@pytest.mark.parametrize("settings_overrides", [{"public_url": "https://pay.example"}])
async def test_the_cookie_is_secure_when_the_public_url_is_https(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    async with httpx.AsyncClient(transport=client._transport, base_url="https://testserver") as browser:
        await sign_in(browser, sandbox)
        browser.cookies.clear()
        person = person_of(sandbox)
        answer = await password_step(browser, person.email, person.password)
    assert "secure" in answer.headers["set-cookie"].lower()


async def test_a_wrong_password_shows_the_form_again_and_opens_nothing(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    await sign_in(client, sandbox)
    client.cookies.clear()
    answer = await password_step(client, person_of(sandbox).email, "not the password at all")
    assert answer.status_code == 401
    assert "do not match" in answer.text
    assert "payorch_session" not in answer.headers.get("set-cookie", "")
    assert (await client.get("/dashboard/overview")).status_code == 303


async def test_sign_in_without_the_form_token_is_refused(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    await sign_in(client, sandbox)
    client.cookies.clear()
    person = person_of(sandbox)
    answer = await client.post(
        "/dashboard/sign-in", data={"email": person.email, "password": person.password}
    )
    assert answer.status_code == 403
    assert "payorch_session" not in answer.headers.get("set-cookie", "")


@pytest.mark.parametrize("settings_overrides", [{"dashboard_sign_in_rate_limit": "3/minute"}])
async def test_sign_in_attempts_are_rate_limited(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    await sign_in(client, sandbox)  # an invite and its enrollment are not sign-in attempts
    client.cookies.clear()
    person = person_of(sandbox)
    for _ in range(3):
        assert (await password_step(client, "nobody@example.com", "wrong wrong wrong")).status_code == 401
    refused = await password_step(client, person.email, person.password)  # even the right one
    assert refused.status_code == 429
    assert "Too many sign-in attempts" in refused.text
    assert int(refused.headers["retry-after"]) >= 1


async def test_a_form_without_the_csrf_token_is_refused(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    csrf = await sign_in(client, sandbox)
    for data in ({}, {"csrf": "0" * 64}):
        refused = await client.post("/dashboard/sign-out", data=data)
        assert refused.status_code == 403, refused.text
    assert (await client.get("/dashboard/overview")).status_code == 200  # still signed in
    out = await client.post("/dashboard/sign-out", data={"csrf": csrf})
    assert out.status_code == 303 and out.headers["location"] == "/dashboard/sign-in"
    await assert_back_to_sign_in(client)


async def test_a_signed_out_session_cookie_no_longer_works(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    csrf = await sign_in(client, sandbox)
    token = client.cookies.get("payorch_session")
    await client.post("/dashboard/sign-out", data={"csrf": csrf})
    client.cookies.set("payorch_session", token or "", path="/dashboard")
    await assert_back_to_sign_in(client)


async def test_a_session_ends_after_its_absolute_lifetime_however_active(
    client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock, runtime: Runtime
) -> None:
    settings = runtime.settings
    await sign_in(client, sandbox)
    step = settings.dashboard_idle_seconds - 60  # a page view before each idle expiry
    lived = 0
    while lived + step < settings.dashboard_session_seconds - 1:
        clock.advance(step)
        lived += step
        assert (await client.get("/dashboard/overview")).status_code == 200, lived
    clock.advance(settings.dashboard_session_seconds - 1 - lived)
    assert (await client.get("/dashboard/overview")).status_code == 200
    clock.advance(2)
    await assert_back_to_sign_in(client)


async def test_a_session_ends_after_its_idle_time(
    client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock, runtime: Runtime
) -> None:
    idle = runtime.settings.dashboard_idle_seconds
    await sign_in(client, sandbox)
    clock.advance(61)
    assert (await client.get("/dashboard/overview")).status_code == 200  # noted: last seen now
    clock.advance(30)
    assert (await client.get("/dashboard/payments")).status_code == 200  # not noted (< a minute)
    clock.advance(idle - 30 - 1)  # idle - 1 since the page view that was noted
    assert (await client.get("/dashboard/overview")).status_code == 200
    clock.advance(idle + 1)
    await assert_back_to_sign_in(client)


@pytest.mark.parametrize("settings_overrides", [{"dashboard_key_sign_in": True}])
async def test_revoking_the_key_ends_its_sessions_at_once(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    signed = await sign_in_with(client, sandbox.api_key)
    assert signed.status_code == 303 and signed.headers["location"] == "/dashboard/overview"
    other = await client.post("/v1/admin/api-credentials", json={"name": "second"}, headers=sandbox.headers)
    assert other.status_code == 201, other.text
    mine = (await client.get("/v1/admin/api-credentials", headers=sandbox.headers)).json()["items"]
    first = next(c for c in mine if c["id"] != other.json()["id"])
    second = {"Authorization": "Bearer " + other.json()["api_key"]}
    revoked = await client.delete(f"/v1/admin/api-credentials/{first['id']}", headers=second)
    assert revoked.status_code == 204, revoked.text
    await assert_back_to_sign_in(client)


async def test_unknown_pages_answer_the_dashboards_404_page(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    await sign_in(client, sandbox)
    page = await client.get("/dashboard/no-such-page")
    assert page.status_code == 404
    assert "Not found" in page.text and page.headers["x-frame-options"] == "DENY"


async def test_each_session_sees_its_own_application(client: httpx.AsyncClient, runtime: Runtime) -> None:
    first, second = await new_application(runtime), await new_application(runtime)
    await sign_in(client, first)
    assert first.application_id in (await client.get("/dashboard/overview")).text
    client.cookies.clear()
    await sign_in(client, second)
    page = await client.get("/dashboard/overview")
    assert second.application_id in page.text and first.application_id not in page.text
    assert csrf_of(page)
