"""Routing's HTTP calls and the rules the tests save."""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

import httpx

from tests.kit import Sandbox

C = "provider_c_redirect_get"


def routing_url(sandbox: Sandbox, tail: str = "") -> str:
    return f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/routing{tail}"


async def put_routing(client: httpx.AsyncClient, sandbox: Sandbox, body: dict[str, Any]) -> httpx.Response:
    return await client.put(routing_url(sandbox), json=body, headers=sandbox.headers)


async def save_rules(
    client: httpx.AsyncClient, sandbox: Sandbox, *rules: dict[str, Any], default: str = "priority"
) -> dict[str, Any]:
    response = await put_routing(client, sandbox, {"default": default, "rules": list(rules)})
    assert response.status_code == 200, response.text
    return response.json()


async def evaluate(client: httpx.AsyncClient, sandbox: Sandbox, **body: Any) -> httpx.Response:
    return await client.post(routing_url(sandbox, "/evaluate"), json=body, headers=sandbox.headers)


def split_pick(intent_id: str, first_weight: int) -> bool:
    """Whether docs/routing.md's split hash puts ``intent_id`` in the first share."""
    bucket = int.from_bytes(hashlib.sha256(intent_id.encode()).digest()[:8], "big") % 100
    return bucket < first_weight


def section(page: str) -> str:
    """The dashboard intent page's routing section, as text."""
    found = re.search(r'<section aria-labelledby="routing-title" id="routing">(.*?)</section>', page, re.S)
    assert found, "no routing section"
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(1))))
