"""Every `# example:` block of docs/client.md, and the README's tour, run against a live server
with a sandbox key."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from payorch.client import PayorchClient
from tests.kit import Sandbox
from tests.live import live_server, payorch_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "client.md"
TOUR = re.search(r"## A walk through.*?```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
BLOCK = re.compile(r"```python\n(# example: ([^\n]+)\n.*?)```", re.DOTALL)
EXAMPLES = {name.split(" (")[0]: code for code, name in BLOCK.findall(DOC.read_text())}


def test_the_guide_has_examples() -> None:
    assert {"create-and-read", "async", "errors", "webhook-receiver"} <= set(EXAMPLES)


@pytest.fixture(scope="module")
def docs_url(database_url: str) -> Iterator[str]:
    if "postgres" in database_url:
        pytest.skip("the examples run once, on SQLite")
    with live_server(payorch_env(database_url), "--no-worker") as url:
        yield url


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name: str, docs_url: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYORCH_BASE_URL", docs_url)
    monkeypatch.setenv("PAYORCH_API_KEY", sandbox.api_key)
    monkeypatch.setenv("PAYORCH_MERCHANT_ACCOUNT_ID", sandbox.merchant_account_id)
    if name == "checkout":
        _add_mock_connector(docs_url, sandbox)
    exec(compile(EXAMPLES[name], f"docs/client.md:{name}", "exec"), {"__name__": "__docs__"})  # noqa: S102


def _add_mock_connector(url: str, sandbox: Sandbox) -> None:
    with PayorchClient(sandbox.api_key, url) as client:
        client.create_connector(sandbox.merchant_account_id, provider="provider_a_redirect_post", mode="MOCK")


def test_the_readme_tour_runs_and_its_link_can_be_paid(
    docs_url: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tour as a person runs it: they open the printed link (provider A, a POST provider,
    chosen by auto), press Approve, press Enter; the refund succeeds and no endpoint is left."""
    assert TOUR is not None
    monkeypatch.setenv("PAYORCH_BASE_URL", docs_url)
    monkeypatch.setenv("PAYORCH_API_KEY", sandbox.api_key)
    monkeypatch.setenv("PAYORCH_MERCHANT_ACCOUNT_ID", sandbox.merchant_account_id)
    _add_mock_connector(docs_url, sandbox)
    printed: list[str] = []

    def person_pays(prompt: str) -> str:
        link = printed[-1].removeprefix("Open this link to pay: ")
        _approve_in_a_browser(link, docs_url)
        return ""

    def capture(*args: object, **_: object) -> None:
        printed.append(" ".join(str(a) for a in args))

    tour = {"__name__": "__docs__", "input": person_pays, "print": capture}
    exec(compile(TOUR.group(1), "README.md:tour", "exec"), tour)  # noqa: S102
    assert printed[0].startswith(f"Open this link to pay: {docs_url}/simulator/provider_a/")
    assert printed[1:] == ["AUTHORIZED", "SUCCEEDED"], printed
    with PayorchClient(sandbox.api_key, docs_url) as client:
        assert client.list_webhook_endpoints().items == []  # the tour removed its endpoint


def _approve_in_a_browser(link: str, server: str) -> None:
    """What a browser does with the link: GET it (no form, no script), press Approve, follow the
    redirects until it leaves the service for the shop's return_url."""
    with httpx.Client(timeout=30) as http:
        page = http.get(link)
        assert page.status_code == 200 and 'value="approve"' in page.text, page.text[:500]
        token = re.search(r'name="token_ws" value="([^"]+)"', page.text)
        assert token is not None
        action = re.search(r'<form method="post" action="([^"]+)"', page.text)
        assert action is not None
        answer = http.post(
            urljoin(link, action.group(1)), data={"token_ws": token.group(1), "outcome": "approve"}
        )
        while answer.is_redirect:
            target = urljoin(str(answer.url), answer.headers["location"])
            if urlsplit(target).netloc != urlsplit(server).netloc:
                return  # at the shop: nothing listens there in the tour
            answer = http.get(target)
        raise AssertionError(f"the browser never left for the shop: {answer.status_code} {answer.text[:300]}")
