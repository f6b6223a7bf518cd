"""A buyer's browser, reduced to HTTP: open a checkout, press a button on the simulator's page,
come back through payorch's return handler. No bearer key is sent (browsers have none)."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from payorch.client import Checkout

_FORM = re.compile(r"<form\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_HIDDEN = re.compile(r"<input\b[^>]*>", re.IGNORECASE)


def _attrs(tag: str) -> dict[str, str]:
    return {k.lower(): unescape(v) for k, v in _ATTR.findall(tag)}


def pay(checkout: Checkout, outcome: str = "approve", timeout: float = 30) -> dict[str, list[str]]:
    """Choose ``outcome`` on the simulator page; the query of the final return_url redirect."""
    action = checkout.checkout
    with httpx.Client(timeout=timeout, follow_redirects=False) as browser:
        if action.method == "POST":
            page = browser.post(action.url, data=action.fields)
        else:
            page = browser.get(action.url)
        page.raise_for_status()
        form = next(
            (f for f in map(_attrs, _FORM.findall(page.text)) if f.get("method", "").lower() == "post"),
            None,
        )
        assert form is not None, f"no outcome form on the simulator page: {page.text[:300]}"
        hidden = {
            a["name"]: a.get("value", "")
            for a in map(_attrs, _HIDDEN.findall(page.text))
            if a.get("type") == "hidden" and "name" in a
        }
        chosen = browser.post(
            urljoin(str(page.url), form.get("action", "")), data={**hidden, "outcome": outcome}
        )
        assert chosen.status_code == 303, chosen.text[:300]
        back = browser.get(chosen.headers["location"])  # payorch's return handler
        assert back.status_code == 303, back.text[:300]
        return parse_qs(urlsplit(back.headers["location"]).query)
