"""Signing in to the dashboard over plain HTTP (httpx), as a browser's form posts would."""

from __future__ import annotations

import re

import httpx

from tests.kit import Sandbox

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(page: httpx.Response) -> str:
    found = CSRF.search(page.text)
    assert found, page.text
    return found.group(1)


async def sign_in_with(client: httpx.AsyncClient, api_key: str) -> httpx.Response:
    form = await client.get("/dashboard/sign-in")
    assert form.status_code == 200, form.text
    return await client.post("/dashboard/sign-in", data={"csrf": csrf_of(form), "api_key": api_key})


async def sign_in(client: httpx.AsyncClient, app: Sandbox) -> str:
    """Signs ``client`` in as ``app``; returns the session's CSRF token (from the overview)."""
    answer = await sign_in_with(client, app.api_key)
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/dashboard/overview"
    overview = await client.get("/dashboard/overview")
    assert overview.status_code == 200, overview.text
    return csrf_of(overview)


async def assert_back_to_sign_in(client: httpx.AsyncClient) -> None:
    """The session is over: a page sends the browser to the sign-in form."""
    gone = await client.get("/dashboard/overview")
    assert gone.status_code == 303, gone.text
    assert gone.headers["location"] == "/dashboard/sign-in"
