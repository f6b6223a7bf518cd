"""A tiny browser for tests: submits HTML forms and follows redirects like a real one would.

It stays on our own origin (http://testserver, served in-process, unless told another); a
redirect elsewhere (the shop's return_url) ends the trip and is answered as the final URL. Pages that submit a form by
script on load (the provider's POST returns) are submitted, as a browser running JS would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx

OWN_ORIGIN = "http://testserver"


@dataclass
class Form:
    action: str
    method: str
    id: str | None
    fields: dict[str, str] = field(default_factory=dict)
    buttons: list[tuple[str, str]] = field(default_factory=list)
    options: dict[str, list[str]] = field(default_factory=dict)  # each <select>'s option values


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._current: Form | None = None
        self.scripts: list[str] = []
        self._in_script = False
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._current = Form(a.get("action", ""), a.get("method", "get").upper(), a.get("id"))
            self.forms.append(self._current)
        elif tag == "input" and self._current is not None and a.get("name"):
            if a.get("type", "text") not in ("submit", "button"):
                self._current.fields[a["name"]] = a.get("value", "")
        elif tag == "select" and self._current is not None and a.get("name"):
            self._select = a["name"]
            self._current.options[self._select] = []
        elif tag == "option" and self._current is not None and self._select is not None:
            self._current.options[self._select].append(a.get("value", ""))
            # Sent as a browser would: the first option, unless one is selected.
            if len(self._current.options[self._select]) == 1 or "selected" in a:
                self._current.fields[self._select] = a.get("value", "")
        elif tag == "button" and self._current is not None and a.get("name"):
            self._current.buttons.append((a["name"], a.get("value", "")))
        elif tag == "script":
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._current = None
        elif tag == "select":
            self._select = None
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


@dataclass
class Page:
    url: str
    response: httpx.Response
    forms: list[Form]
    scripts: list[str]

    def form_with_button(self, name: str, value: str) -> Form:
        for form in self.forms:
            if (name, value) in form.buttons:
                return form
        raise AssertionError(f"no button {name}={value} on {self.url}: {self.response.text[:500]}")


@dataclass
class Trip:
    """Where the browser ended: a page of ours, or a redirect away (``left_to``)."""

    page: Page | None
    left_to: str | None
    visited: list[str]


def parse(url: str, response: httpx.Response) -> Page:
    parser = _FormParser()
    parser.feed(response.text)
    return Page(url, response, parser.forms, parser.scripts)


class Browser:
    def __init__(self, client: httpx.AsyncClient, origin: str | None = None) -> None:
        self.client = client
        self.origin = urlsplit(origin or OWN_ORIGIN)

    async def open(self, url: str, method: str = "GET", fields: dict[str, str] | None = None) -> Trip:
        visited: list[str] = []
        for _ in range(20):
            where = urlsplit(url)
            if (where.scheme, where.netloc) != (self.origin.scheme, self.origin.netloc):
                return Trip(None, url, visited)
            visited.append(url)
            if method == "POST":
                response = await self.client.post(url, data=fields or {})
            else:
                response = await self.client.get(url, params=fields or None)
            if response.status_code in (301, 302, 303, 307, 308):
                location = urljoin(str(response.url), response.headers["location"])
                if response.status_code in (307, 308):
                    url = location
                else:
                    url, method, fields = location, "GET", None
                continue
            page = parse(str(response.url), response)
            auto = next(
                (f for f in page.forms if f.id and f'{f.id}").submit()' in "".join(page.scripts)),
                None,
            )
            if auto is None:
                return Trip(page, None, visited)
            url = urljoin(str(response.url), auto.action)
            method, fields = auto.method, dict(auto.fields)
        raise AssertionError(f"too many redirects: {visited}")

    async def press(self, page: Page, name: str, value: str, chosen: Mapping[str, str] | None = None) -> Trip:
        """Press the button ``name=value``, with ``chosen`` options picked in its form's selects
        (each must be offered there)."""
        form = page.form_with_button(name, value)
        for select, option in (chosen or {}).items():
            assert option in form.options.get(select, []), f"no option {select}={option} on {page.url}"
        fields = {**form.fields, **(chosen or {}), name: value}
        return await self.open(urljoin(page.url, form.action), form.method, fields)
