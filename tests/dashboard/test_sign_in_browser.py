"""Signing in in Chromium, on SQLite and PostgreSQL: an invite, TOTP enrollment with its QR code
and recovery codes, sign-in with password and code, the choice of application for an email in two; a passkey made and used with Chromium's
virtual authenticator (DevTools' WebAuthn domain); a screenshot of every sign-in page at 1280
and 390 px, each checked to fit the width."""

from __future__ import annotations

import re
import secrets

import pytest

from tests import browser as web
from tests.browser import chromium, fits_the_width, page_at, screenshot, shots_dir, submit
from tests.live import create_sandbox, live_server, payorch_env
from tests.totp_codes import fresh_code

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SHOTS = "sign-in"


def _email(who: str) -> str:
    return f"{who}-{secrets.token_hex(4)}@example.com"


async def test_totp_enrollment_and_sign_in_pages(database_url: str) -> None:
    web.need_chromium()
    shots = shots_dir(SHOTS)
    env = payorch_env(database_url)
    with live_server(env, "--no-worker") as url:
        app = create_sandbox({**env, "PAYORCH_PUBLIC_URL": url})
        async with chromium() as browser:
            page = await page_at(browser)
            violations = web.csp_violations(page)
            email = _email("admin")
            invite = await web.invite_url(url, app["api_key"], email)
            await page.goto(invite)
            assert await page.get_by_role("heading", name="Set your password").is_visible()
            await screenshot(page, shots, "invite", check=fits_the_width)
            await web.accept_invite(page, invite)
            assert page.url == url + "/dashboard/sign-in/enroll"
            qr = page.get_by_role("img", name="QR code of your authenticator key")
            assert (await qr.get_attribute("src") or "").startswith("data:image/svg+xml")
            await screenshot(page, shots, "enroll-totp", check=fits_the_width)
            await page.get_by_role("link", name="Use a passkey instead").click()
            await page.wait_for_url(url + "/dashboard/sign-in/enroll/passkey")
            await screenshot(page, shots, "enroll-passkey", check=fits_the_width)
            await page.get_by_role("link", name="Use an authenticator app instead").click()
            await page.wait_for_url(url + "/dashboard/sign-in/enroll")
            secret = await web.enroll_totp(page)
            codes = await page.locator("#recovery-codes li").all_inner_texts()
            assert len(codes) == 10
            await screenshot(page, shots, "recovery-codes", check=fits_the_width)
            await web.follow(page, page.get_by_role("link", name="Continue to the dashboard"))
            assert page.url == url + "/dashboard/overview"
            await submit(page, "Sign out")
            assert await page.get_by_role("heading", name="Sign in").is_visible()
            await page.get_by_label("Email").focus()  # the focus ring is visible in the shot
            await screenshot(page, shots, "sign-in", check=fits_the_width)
            await page.get_by_label("Email").fill(email)
            await page.get_by_label("Password").fill("not the password, surely")
            await submit(page, "Sign in")
            assert await page.get_by_role("alert").is_visible()
            await screenshot(page, shots, "sign-in-refused", check=fits_the_width)
            await page.get_by_label("Password").fill(web.PASSWORD)
            await submit(page, "Sign in")
            assert page.url == url + "/dashboard/sign-in/second-factor"
            await screenshot(page, shots, "second-factor", check=fits_the_width)
            await page.get_by_label(web.TOTP_CODE_LABEL).fill(await fresh_code(secret))
            await submit(page, "Confirm")
            assert page.url == url + "/dashboard/overview"
            await page.goto(url + "/dashboard/recovery-codes")
            await screenshot(page, shots, "recovery-codes-count", check=fits_the_width)
            # The same email in a second application: the password step asks which one.
            other = create_sandbox({**env, "PAYORCH_PUBLIC_URL": url})
            chooser = await page_at(browser)
            await web.accept_invite(chooser, await web.invite_url(url, other["api_key"], email))
            await chooser.context.clear_cookies()
            await chooser.goto(url + "/dashboard/sign-in")
            await chooser.get_by_label("Email").fill(email)
            await chooser.get_by_label("Password").fill(web.PASSWORD)
            await submit(chooser, "Sign in")
            assert await chooser.get_by_role("group", name="Application").is_visible()
            await screenshot(chooser, shots, "choose-application", check=fits_the_width)
            await chooser.get_by_label(re.compile(app["application_id"])).check()
            await chooser.get_by_label("Password").fill(web.PASSWORD)
            await submit(chooser, "Sign in")
            assert chooser.url == url + "/dashboard/sign-in/second-factor"  # the first one's TOTP
            assert not violations, violations


async def test_a_passkey_is_made_and_signs_in_with_the_virtual_authenticator(database_url: str) -> None:
    web.need_chromium()
    env = payorch_env(database_url)
    # A relying party's id is a host name: the server's public URL names localhost.
    with live_server(env, "--no-worker", host="localhost") as url:
        app = create_sandbox({**env, "PAYORCH_PUBLIC_URL": url})
        async with chromium() as browser:
            page = await page_at(browser)
            violations = web.csp_violations(page)
            devtools = await page.context.new_cdp_session(page)
            await devtools.send("WebAuthn.enable")
            added = await devtools.send(
                "WebAuthn.addVirtualAuthenticator",
                {
                    "options": {
                        "protocol": "ctap2",
                        "transport": "internal",
                        "hasResidentKey": True,
                        "hasUserVerification": True,
                        "isUserVerified": True,
                    }
                },
            )
            email = _email("passkey")
            await web.accept_invite(page, await web.invite_url(url, app["api_key"], email))
            await page.get_by_role("link", name="Use a passkey instead").click()
            await page.wait_for_url(url + "/dashboard/sign-in/enroll/passkey")
            await page.get_by_role("button", name="Create a passkey").click()
            await page.wait_for_url(url + "/dashboard/recovery-codes")
            made = await devtools.send(
                "WebAuthn.getCredentials", {"authenticatorId": added["authenticatorId"]}
            )
            assert len(made["credentials"]) == 1
            await submit(page, "Sign out")
            await page.get_by_label("Email").fill(email)
            await page.get_by_label("Password").fill(web.PASSWORD)
            await submit(page, "Sign in")
            assert page.url == url + "/dashboard/sign-in/second-factor"
            await page.get_by_role("button", name="Use my passkey").click()
            await page.wait_for_url(url + "/dashboard/overview")
            used = await devtools.send(
                "WebAuthn.getCredentials", {"authenticatorId": added["authenticatorId"]}
            )
            assert used["credentials"][0]["signCount"] >= 1
            # Without the authenticator's key, the passkey does not sign in.
            await devtools.send(
                "WebAuthn.removeCredential",
                {
                    "authenticatorId": added["authenticatorId"],
                    "credentialId": used["credentials"][0]["credentialId"],
                },
            )
            await submit(page, "Sign out")
            await page.get_by_label("Email").fill(email)
            await page.get_by_label("Password").fill(web.PASSWORD)
            await submit(page, "Sign in")
            await page.get_by_role("button", name="Use my passkey").click()
            status = page.locator("#passkey-status")
            await status.wait_for(state="visible")
            await page.wait_for_function("document.getElementById('passkey-status').textContent.length > 0")
            assert page.url == url + "/dashboard/sign-in/second-factor"
            assert not violations, violations
