"""Every `# example:` block of docs/client.md runs against a live server with a sandbox key."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from payorch.client import PayorchClient
from tests.conftest import Sandbox
from tests.live import live_server, payorch_env

DOC = Path(__file__).resolve().parents[2] / "docs" / "client.md"
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
def test_example_runs(
    name: str, docs_url: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAYORCH_BASE_URL", docs_url)
    monkeypatch.setenv("PAYORCH_API_KEY", sandbox.api_key)
    monkeypatch.setenv("PAYORCH_MERCHANT_ACCOUNT_ID", sandbox.merchant_account_id)
    if name == "checkout":
        _add_mock_connector(docs_url, sandbox)
    exec(compile(EXAMPLES[name], f"docs/client.md:{name}", "exec"), {"__name__": "__docs__"})  # noqa: S102


def _add_mock_connector(url: str, sandbox: Sandbox) -> None:
    with PayorchClient(sandbox.api_key, url) as client:
        client.create_connector(
            sandbox.merchant_account_id, provider="provider_a_redirect_post", mode="MOCK"
        )
