"""Signing in as a person, over plain HTTP on SQLite and PostgreSQL: an invite's password, the
second factor (TOTP, recovery codes) and its enrollment, the lock per account, the application
chosen when an email has several, a role change or disabling that ends a session at once, the
API key's sign-in (SANDBOX only, behind a setting), and the activity entries of each step."""

from __future__ import annotations

import httpx
import pyotp
import pytest
from sqlalchemy import select, update

from payorch.auth.service import Caller
from payorch.clock import FrozenClock
from payorch.db.tables.activity import activity_log
from payorch.db.tables.people import user_recovery_codes, users
from payorch.runtime import Runtime
from payorch.users import service as users_service
from tests.dashboard.signing import (
    PASSWORD,
    accept,
    assert_back_to_sign_in,
    code_now,
    csrf_of,
    enroll_totp,
    invite,
    new_person,
    password_step,
    person_of,
    second_factor_step,
    sign_in,
    sign_in_as,
    sign_in_with,
)
from tests.kit import Sandbox, new_application
from tests.totp_codes import code_at


async def _entries(runtime: Runtime, application_id: str) -> list[tuple[str, str, str, dict[str, object]]]:
    """(action, actor id, outcome, changes) of the application's activity entries, in order."""
    query = (
        select(activity_log.c.action, activity_log.c.actor_id, activity_log.c.outcome, activity_log.c.changes)
        .where(activity_log.c.application_id == application_id)
        .order_by(activity_log.c.seq)
    )
    async with runtime.database.reading() as conn:
        return [(r.action, r.actor_id, r.outcome, r.changes) for r in await conn.execute(query)]


async def _user_id(runtime: Runtime, email: str) -> str:
    async with runtime.database.reading() as conn:
        return str((await conn.execute(select(users.c.id).where(users.c.email == email))).scalar_one())


def _operator(app: Sandbox) -> Caller:
    return Caller(app.application_id, "SANDBOX", "operator")


async def test_an_owner_accepts_the_invite_enrolls_totp_and_signs_in_with_password_and_code(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    email = "ada@example.com"
    accepted = await accept(client, await invite(client, sandbox, email))
    assert accepted.status_code == 303 and accepted.headers["location"] == "/dashboard/sign-in/enroll"
    # Before the second factor, no page opens but the second factor's.
    assert (await client.get("/dashboard/overview")).status_code == 303
    assert (await client.get("/dashboard/sign-in")).headers["location"] == "/dashboard/sign-in/second-factor"
    before = client.cookies.get("payorch_session")
    secret, codes = await enroll_totp(client)
    assert client.cookies.get("payorch_session") != before  # a new token once signed in
    assert (await client.get("/dashboard/overview")).status_code == 200
    # The secret is kept encrypted, never as typed.
    async with runtime.database.reading() as conn:
        stored = (await conn.execute(select(users.c.totp_secret).where(users.c.email == email))).scalar_one()
    assert stored and secret not in stored and runtime.cipher.decrypt(stored) == secret
    # Signing in again: password, then the code of now.
    client.cookies.clear()
    first = await password_step(client, email, PASSWORD)
    assert first.status_code == 303 and first.headers["location"] == "/dashboard/sign-in/second-factor"
    page = await client.get("/dashboard/sign-in/second-factor")
    assert "Code from your authenticator app" in page.text
    second = await client.post(
        "/dashboard/sign-in/second-factor",
        data={"csrf": csrf_of(page), "code": code_at(secret, runtime.clock.now())},
    )
    assert second.status_code == 303 and second.headers["location"] == "/dashboard/overview"
    overview = await client.get("/dashboard/overview")
    assert overview.status_code == 200
    user_id = await _user_id(runtime, email)
    mine = [(a, o, c) for a, who, o, c in await _entries(runtime, sandbox.application_id) if who == user_id]
    assert mine == [
        ("user.invite_accepted", "success", {}),
        ("user.mfa_enrolled", "success", {"factor": "totp"}),
        ("user.signed_in", "success", {"method": "totp"}),
        ("user.signed_in", "success", {"method": "totp"}),
    ]
    # Signing out is logged too, and the cookie no longer opens a page.
    out = await client.post("/dashboard/sign-out", data={"csrf": csrf_of(overview)})
    assert out.status_code == 303
    assert (await _entries(runtime, sandbox.application_id))[-1][:2] == ("user.signed_out", user_id)
    await assert_back_to_sign_in(client)
    # Nothing typed is in the log: not the password, the secret, a code.
    logged = repr(await _entries(runtime, sandbox.application_id))
    for secret_text in (PASSWORD, secret, *codes):
        assert secret_text not in logged


async def test_the_invite_page_checks_the_password_and_works_once(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    url = await invite(client, sandbox, "bo@example.com", "viewer")
    page = await client.get(url)
    assert page.status_code == 200 and "bo@example.com" in page.text
    csrf = csrf_of(page)
    short = await client.post(
        url, data={"csrf": csrf, "password": "too short", "password_again": "too short"}
    )
    assert short.status_code == 400 and "at least 12 characters" in short.text
    differ = await client.post(
        url, data={"csrf": csrf, "password": PASSWORD, "password_again": PASSWORD + "!"}
    )
    assert differ.status_code == 400 and "differ" in differ.text
    no_token = await client.post(url, data={"password": PASSWORD, "password_again": PASSWORD})
    assert no_token.status_code == 403
    # A viewer needs no second factor: signed in at once.
    done = await client.post(url, data={"csrf": csrf, "password": PASSWORD, "password_again": PASSWORD})
    assert done.status_code == 303 and done.headers["location"] == "/dashboard/overview"
    assert (await client.get("/dashboard/overview")).status_code == 200
    client.cookies.clear()
    assert (await client.get(url)).status_code == 404  # used
    assert (await client.get("/dashboard/invite/not-a-token")).status_code == 404
    # And signs in with the password alone.
    signed = await password_step(client, "bo@example.com", PASSWORD)
    assert signed.status_code == 303 and signed.headers["location"] == "/dashboard/overview"


@pytest.mark.parametrize("settings_overrides", [{"require_mfa_for_all": True}])
async def test_everyone_enrolls_a_second_factor_when_the_setting_says_so(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    accepted = await accept(client, await invite(client, sandbox, "cy@example.com", "viewer"))
    assert accepted.headers["location"] == "/dashboard/sign-in/enroll"
    assert (await client.get("/dashboard/payments")).status_code == 303
    await enroll_totp(client)
    assert (await client.get("/dashboard/payments")).status_code == 200


async def test_a_totp_code_signs_in_once(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, clock: FrozenClock
) -> None:
    """A code seen over a shoulder or in a proxy's log cannot sign in again: the service keeps
    the step of the last code accepted (the enrollment's included) and refuses it and any older."""
    await sign_in(client, sandbox)  # enrolled with the code of now
    person = person_of(sandbox)
    enrolled_with = pyotp.TOTP(person.totp_secret).at(clock.now())
    client.cookies.clear()
    assert (await password_step(client, person.email, person.password)).status_code == 303
    replayed = await second_factor_step(client, enrolled_with)
    assert replayed.status_code == 401, replayed.text
    async with runtime.database.reading() as conn:
        failures = (await conn.execute(select(users.c.failed_sign_ins).where(users.c.email == person.email))).scalar_one()
    assert failures == 1  # a replay counts toward the lock like any wrong code
    clock.advance(30)  # the app shows the next code
    client.cookies.clear()
    await sign_in_as(client, person)
    used = pyotp.TOTP(person.totp_secret).at(clock.now())
    client.cookies.clear()
    assert (await password_step(client, person.email, person.password)).status_code == 303
    assert (await second_factor_step(client, used)).status_code == 401


@pytest.mark.parametrize("settings_overrides", [{"sign_in_max_failures": 3, "sign_in_lock_seconds": 600}])
async def test_failed_attempts_lock_the_account_with_the_same_answer(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, clock: FrozenClock
) -> None:
    await sign_in(client, sandbox)
    person = person_of(sandbox)
    client.cookies.clear()
    unknown = await password_step(client, "nobody@example.com", PASSWORD)
    assert unknown.status_code == 401
    message = "do not match an account that may sign in"
    # Two wrong passwords and one wrong code: three failures in a row lock the account.
    for _ in range(2):
        wrong = await password_step(client, person.email, "a wrong password, long")
        assert wrong.status_code == 401 and message in wrong.text
    assert (await password_step(client, person.email, person.password)).status_code == 303
    bad_code = await second_factor_step(
        client, "000000" if pyotp.TOTP(person.totp_secret).at(clock.now()) != "000000" else "111111"
    )
    assert bad_code.status_code == 401 and message in bad_code.text  # locked: back to the form
    await assert_back_to_sign_in(client)
    # Locked: even the right password gets the same answer as an unknown email.
    right = await password_step(client, person.email, person.password)
    assert right.status_code == 401 and message in right.text
    assert right.text.replace(person.email, "") == unknown.text.replace("nobody@example.com", "").replace(
        csrf_of(unknown), csrf_of(right)
    )
    clock.advance(601)
    await sign_in_as(client, person)
    assert (await client.get("/dashboard/overview")).status_code == 200
    user_id = await _user_id(runtime, person.email)
    failed = [
        c for a, who, o, c in await _entries(runtime, sandbox.application_id) if a == "user.sign_in_failed"
    ]
    assert failed == [
        {"reason": "password"},
        {"reason": "password"},
        {"reason": "second_factor", "locked_seconds": 600},
        {"reason": "locked"},
    ]
    assert all(
        who == user_id
        for a, who, _, _ in await _entries(runtime, sandbox.application_id)
        if a == "user.sign_in_failed"
    )


async def test_a_recovery_code_works_once_in_place_of_the_second_factor(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    await sign_in(client, sandbox)
    person = person_of(sandbox)
    code = person.recovery_codes[0]
    client.cookies.clear()
    assert (await password_step(client, person.email, person.password)).status_code == 303
    used = await second_factor_step(client, code.upper().replace("-", " "))  # as typed, loosely
    assert used.status_code == 303 and used.headers["location"] == "/dashboard/overview"
    assert (await _entries(runtime, sandbox.application_id))[-2][0] == "user.recovery_code_used"
    client.cookies.clear()
    assert (await password_step(client, person.email, person.password)).status_code == 303
    again = await second_factor_step(client, code)
    assert again.status_code == 401 and "did not work" in again.text
    assert (await client.get("/dashboard/overview")).status_code == 303
    async with runtime.database.reading() as conn:
        hashes = [r.code_hash for r in await conn.execute(select(user_recovery_codes.c.code_hash))]
    assert code not in repr(hashes) and len(hashes) >= 10  # only hashes are kept


async def test_new_recovery_codes_replace_the_old_ones(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    csrf = await sign_in(client, sandbox)
    page = await client.get("/dashboard/recovery-codes")
    assert "10</strong> unused recovery codes" in page.text
    made = await client.post("/dashboard/recovery-codes", data={"csrf": csrf})
    assert made.status_code == 200 and "shown only once" in made.text
    client.cookies.clear()
    person = person_of(sandbox)
    assert (await password_step(client, person.email, person.password)).status_code == 303
    old = await second_factor_step(client, person.recovery_codes[1])
    assert old.status_code == 401


async def test_an_email_in_two_applications_chooses_after_the_password(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    first, second = await new_application(runtime), await new_application(runtime)
    email = "twice@example.com"
    await new_person(client, first, email)
    client.cookies.clear()
    await new_person(client, second, email)
    client.cookies.clear()
    choose = await password_step(client, email, PASSWORD)
    assert choose.status_code == 200 and "Choose the application" in choose.text
    assert first.application_id in choose.text and second.application_id in choose.text
    assert "payorch_session" not in choose.headers.get("set-cookie", "")
    chosen = await password_step(client, email, PASSWORD, second.application_id)
    assert chosen.status_code == 303 and chosen.headers["location"] == "/dashboard/sign-in/second-factor"
    # A wrong password is refused in every application, as for one.
    client.cookies.clear()
    assert (await password_step(client, email, "not the password, long")).status_code == 401


async def test_a_role_change_or_disabling_ends_the_session_at_its_next_request(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    await sign_in(client, sandbox)  # the owner
    operator = _operator(sandbox)
    for change in ("role", "disable"):
        client.cookies.clear()
        email = f"{change}@example.com"
        accepted = await accept(client, await invite(client, sandbox, email, "operator"))
        assert accepted.headers["location"] == "/dashboard/overview"
        assert (await client.get("/dashboard/payments")).status_code == 200
        user_id = await _user_id(runtime, email)
        async with runtime.database.transaction() as conn:
            if change == "role":
                await users_service.set_role(conn, runtime.clock, operator, user_id, "viewer")
            else:
                await users_service.disable(conn, runtime.clock, operator, user_id)
        await assert_back_to_sign_in(client)
        signed = await password_step(client, email, PASSWORD)
        assert signed.status_code == (303 if change == "role" else 401)


async def test_a_demoted_persons_open_session_loses_the_power_at_its_next_request(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    """Even a role changed behind the service's back (no session deleted) counts at the next
    request: the session's lookup reads the person's role with the session."""
    accepted = await accept(client, await invite(client, sandbox, "dee@example.com", "operator"))
    assert accepted.status_code == 303
    csrf = csrf_of(await client.get("/dashboard/overview"))
    refund = {"csrf": csrf, "amount": "1.00", "reason": "requested_by_customer"}
    allowed = await client.post("/dashboard/payments/payi_nosuchintent/refunds", data=refund)
    assert allowed.status_code == 404  # an operator may refund: the form ran (no such intent)
    async with runtime.database.transaction() as conn:
        await conn.execute(update(users).where(users.c.email == "dee@example.com").values(role="viewer"))
    refused = await client.post("/dashboard/payments/payi_nosuchintent/refunds", data=refund)
    assert refused.status_code == 403 and "Your role (viewer) cannot refund payments" in refused.text
    assert (await client.get("/dashboard/overview")).status_code == 200  # still reads


async def test_key_sign_in_is_off_by_default(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    refused = await sign_in_with(client, sandbox.api_key)
    assert refused.status_code == 403 and "turned off" in refused.text
    assert "API key" not in (await client.get("/dashboard/sign-in")).text
    assert (await client.get("/dashboard/overview")).status_code == 303


@pytest.mark.parametrize("settings_overrides", [{"dashboard_key_sign_in": True}])
async def test_key_sign_in_opens_sandbox_applications_only(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    production = await new_application(runtime, "PRODUCTION")
    refused = await sign_in_with(client, production.api_key)
    assert refused.status_code == 403 and "PRODUCTION" in refused.text
    assert (await client.get("/dashboard/overview")).status_code == 303
    wrong = await sign_in_with(client, sandbox.api_key[:-2] + "xx")
    assert wrong.status_code == 401
    signed = await sign_in_with(client, sandbox.api_key)
    assert signed.status_code == 303 and signed.headers["location"] == "/dashboard/overview"
    assert (await client.get("/dashboard/overview")).status_code == 200


async def test_the_password_alone_cannot_enroll_another_factor(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    await sign_in(client, sandbox)  # TOTP enrolled
    person = person_of(sandbox)
    client.cookies.clear()
    assert (await password_step(client, person.email, person.password)).status_code == 303
    csrf = csrf_of(await client.get("/dashboard/sign-in/second-factor"))
    for path in ("/dashboard/sign-in/enroll", "/dashboard/sign-in/enroll/passkey"):
        page = await client.get(path)
        assert page.status_code == 303 and page.headers["location"] == "/dashboard/sign-in/second-factor"
    options = await client.post("/dashboard/sign-in/enroll/passkey-options", json={"csrf": csrf})
    assert options.status_code == 409
    kept = await client.post("/dashboard/sign-in/enroll", data={"csrf": csrf, "code": "123456"})
    assert kept.status_code == 303 and kept.headers["location"] == "/dashboard/sign-in/second-factor"
    assert (await client.get("/dashboard/overview")).status_code == 303


async def test_the_second_factor_forms_refuse_a_missing_or_foreign_token(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    await sign_in(client, sandbox)
    person = person_of(sandbox)
    client.cookies.clear()
    assert (await password_step(client, person.email, person.password)).status_code == 303
    for token in (None, "é", "0" * 64):
        data = {} if token is None else {"csrf": token}
        for path in (
            "/dashboard/sign-in/second-factor",
            "/dashboard/sign-in/enroll",
            "/dashboard/sign-in/cancel",
        ):
            refused = await client.post(path, data={**data, "code": "123456"})
            assert refused.status_code == 403 and "Form expired" in refused.text, (path, token)
        for path in (
            "/dashboard/sign-in/second-factor/passkey-options",
            "/dashboard/sign-in/second-factor/passkey",
        ):
            refused = await client.post(path, json=data)
            assert refused.status_code == 403, (path, token)
    # Still at the second factor: nothing was counted or changed.
    assert (await second_factor_step(client, code_now(client, person.totp_secret))).status_code == 303
    # Signed in, the sign-in pages send the browser on.
    assert (await client.get("/dashboard/sign-in")).headers["location"] == "/dashboard/overview"
    gone = await client.get("/dashboard/sign-in/second-factor")
    assert gone.status_code == 303 and (await client.get("/dashboard/overview")).status_code == 200
