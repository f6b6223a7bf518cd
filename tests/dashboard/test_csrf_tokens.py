"""Form tokens and API keys with characters outside ASCII are refused (403, 401), never a crash.

``hmac.compare_digest`` raises TypeError for a ``str`` with a non-ASCII character: every token
a client sends is compared as bytes.
"""

from __future__ import annotations

import re

import httpx
from fastapi.routing import APIRoute

from payorch.dashboard.routes import ROUTERS
from tests.dashboard.signing import csrf_of, sign_in
from tests.kit import Sandbox

NON_ASCII = ["é" * 64, "0" * 63 + "é", "€", "\u00ff"]


def dashboard_form_paths() -> list[str]:
    """Every dashboard path that takes a POST, its path parameters filled with a made-up id."""
    paths = []
    for route in (route for router in ROUTERS for route in router.routes):
        if isinstance(route, APIRoute) and "POST" in route.methods and "{rest:path}" not in route.path:
            paths.append(re.sub(r"\{[^}]+\}", "x_0", route.path))
    # Signing in's own forms come before a session (test_sign_in.py checks them).
    return sorted(p for p in set(paths) if not p.startswith(("/dashboard/sign-in", "/dashboard/invite/")))


async def test_every_dashboard_form_refuses_a_non_ascii_token_with_403(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    good = await sign_in(client, sandbox)
    paths = dashboard_form_paths()
    assert len(paths) > 10 and "/dashboard/sign-out" in paths, paths
    for path in paths:
        for token in NON_ASCII:
            refused = await client.post(path, data={"csrf": token})
            assert refused.status_code == 403, (path, token, refused.text)
            assert "Form expired" in refused.text
    assert (await client.get("/dashboard/overview")).status_code == 200  # still signed in
    out = await client.post("/dashboard/sign-out", data={"csrf": good})
    assert out.status_code == 303


async def test_sign_in_refuses_a_non_ascii_form_token_with_403(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    for token in NON_ASCII:
        form = await client.get("/dashboard/sign-in")
        csrf_of(form)  # the pre-session cookie is set
        answer = await client.post("/dashboard/sign-in", data={"csrf": token, "api_key": sandbox.api_key})
        assert answer.status_code == 403, (token, answer.text)
        assert "The form expired" in answer.text
        assert "payorch_session" not in answer.headers.get("set-cookie", "")


async def test_sign_in_refuses_a_non_ascii_pre_session_cookie_with_403(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    # A raw Cookie header: httpx's cookie jar would quote the value.
    answer = await client.post(
        "/dashboard/sign-in",
        content=f"csrf=%C3%A9&api_key={sandbox.api_key}".encode(),
        headers={"content-type": "application/x-www-form-urlencoded", "cookie": "payorch_sign_in=é".encode()},
    )
    assert answer.status_code == 403, answer.text


async def test_a_non_ascii_bearer_key_is_401_not_500(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    for key in ("é", sandbox.api_key[:-1] + "é", "pay_sb_" + "é" * 12 + "_" + "é" * 48):
        # As raw bytes: UTF-8 on the wire, read by the server as Latin-1.
        headers = {"Authorization": b"Bearer " + key.encode()}
        answer = await client.get("/v1/payment-intents", headers=headers)
        assert answer.status_code == 401, (key, answer.text)
        assert answer.json()["error"]["code"] == "AUTHENTICATION_FAILED"
