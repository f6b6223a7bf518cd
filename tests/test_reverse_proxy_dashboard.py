"""The dashboard through deploy/nginx/payorch.conf (Debian's nginx) in front of a live `payorch
serve`: served with its security headers and a working sign-in to an internal address; refused
(403, same headers) to an address the allow lines leave out; nginx's own page when payorch is
down keeps the headers too."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from payorch.dashboard.web import CONTENT_SECURITY_POLICY
from tests.live import free_port, live_server, payorch_env, run_cli
from tests.nginx import _nginx, nginx_serving, render
from tests.totp_codes import code_at

pytestmark = pytest.mark.slow

HEADERS = {"x-frame-options": "DENY", "x-content-type-options": "nosniff", "referrer-policy": "same-origin"}
LOOPBACK = "        allow 127.0.0.0/8;\n"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    _nginx()
    env = payorch_env(f"sqlite:///{tmp_path_factory.mktemp('payorch')}/p.db")
    with live_server(env, "--no-worker") as url:
        yield url.removeprefix("http://"), env


def shipped(upstream: str) -> str:
    return render(upstream, "${PAYORCH_LISTEN}")


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html
    return found.group(1)


def assert_secure(response: httpx.Response) -> None:
    for name, value in HEADERS.items():
        assert response.headers.get(name) == value, (name, response.headers)
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-store"


def test_the_dashboard_is_served_with_its_headers_and_signs_in(
    upstream: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    address, env = upstream
    created = run_cli(
        [
            "applications",
            "create",
            "--name",
            "Live",
            "--environment",
            "PRODUCTION",
            "--owner-email",
            "owner@example.com",
            "--json",
        ],
        env,
    )
    assert created.returncode == 0, created.stderr
    invite = urlsplit(json.loads(created.stdout)["owner_invite_url"]).path
    with nginx_serving(tmp_path, shipped(address)) as proxy, httpx.Client(base_url=proxy) as browser:
        form = browser.get("/dashboard/sign-in")
        assert form.status_code == 200 and "text/html" in form.headers["content-type"]
        assert_secure(form)
        assert form.headers["content-security-policy"] == CONTENT_SECURITY_POLICY  # payorch's own
        # The owner accepts the invite, enrolls TOTP and is signed in (a PRODUCTION key is not).
        page = browser.get(invite)
        password = "a long enough test password"
        data = {"csrf": csrf_of(page.text), "password": password, "password_again": password}
        accepted = browser.post(invite, data=data)
        assert accepted.status_code == 303 and accepted.headers["location"] == "/dashboard/sign-in/enroll"
        enroll = browser.get("/dashboard/sign-in/enroll")
        secret = re.search(r'<code id="totp-secret"[^>]*>([A-Z2-7 ]+)</code>', enroll.text)
        assert secret
        code = code_at(secret.group(1), datetime.now(UTC))
        signed = browser.post("/dashboard/sign-in/enroll", data={"csrf": csrf_of(enroll.text), "code": code})
        assert signed.status_code == 200 and "recovery codes" in signed.text
        page = browser.get("/dashboard/providers")
        assert page.status_code == 200 and "Add a provider" in page.text
        assert_secure(page)
        assert browser.get("/dashboard").status_code == 303  # the bare path reaches payorch too
        assert browser.get("/dashboard/assets/dashboard.css").status_code == 200
        assert browser.get("/dashboardx").status_code == 404  # not the dashboard's prefix


def test_an_address_the_allow_lines_leave_out_is_refused(
    upstream: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    config = shipped(upstream[0])
    assert config.count(LOOPBACK) == 1
    with nginx_serving(tmp_path, config.replace(LOOPBACK, "")) as proxy:
        refused = httpx.get(proxy + "/dashboard/sign-in")
        assert refused.status_code == 403 and "internal addresses only" in refused.text
        assert_secure(refused)
        assert httpx.get(proxy + "/v1/payment-intents/payi_x").status_code == 401  # the API is not


def test_nginx_says_the_dashboard_is_unavailable_with_the_same_headers(tmp_path: Path) -> None:
    _nginx()
    with nginx_serving(tmp_path, shipped(f"127.0.0.1:{free_port()}")) as proxy:  # nothing listens
        down = httpx.get(proxy + "/dashboard/sign-in")
        assert down.status_code == 503 and down.headers["retry-after"] == "1"
        assert "reload in a moment" in down.text
        assert_secure(down)
