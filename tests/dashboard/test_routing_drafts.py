"""The routing page's drafts and dry run over plain HTTP (SQLite, PostgreSQL): the form shows
what is in force (priority when nothing was saved), a program saved as a draft changes nothing
until it is activated, the dry run takes any version and reads amounts as people type them, and
the checks' refusal of a metadata key no intent can have is shown beside its rule."""

from __future__ import annotations

import html
import json
import re

import httpx
import pytest

from payorch.runtime import Runtime
from tests.dashboard.forms import routing_dry_run
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import B
from tests.routing.helpers import C, routing_url

# Its tests make people only to sign them in: each password is hashed once.
pytestmark = pytest.mark.usefixtures("passwords_hashed_once")

TO_C = {"name": "usd-to-c", "if": {"currency": ["USD"]}, "then": {"priority": [C]}}


def textarea(page: str) -> dict[str, object]:
    found = re.search(r'<textarea id="program"[^>]*>(.*?)</textarea>', page, re.DOTALL)
    assert found, page
    shown: dict[str, object] = json.loads(html.unescape(found.group(1)))
    return shown


def chosen(page: str) -> str:
    found = re.search(r"<dt>Chosen</dt><dd><strong>([^<]+)</strong>", page)
    assert found, page
    return found.group(1)


async def decides(client: httpx.AsyncClient, sandbox: Sandbox) -> str:
    """What the providers page says decides ``auto`` for the sandbox's merchant, in words."""
    page = (await client.get("/dashboard/providers")).text
    found = re.search(rf'<p id="decides-{sandbox.merchant_account_id}">(.*?)</p>', page, re.DOTALL)
    assert found, page
    return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split())


async def active_version(client: httpx.AsyncClient, sandbox: Sandbox) -> object:
    return (await client.get(routing_url(sandbox), headers=sandbox.headers)).json()["version"]


async def test_a_draft_is_dry_run_then_activated(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    csrf = await sign_in(client, sandbox)
    url = f"/dashboard/routing/{sandbox.merchant_account_id}"
    first = (await client.get(url)).text
    # Nothing saved: the form holds what decides, the connectors' priority (not an example).
    assert textarea(first) == {"default": "priority", "rules": []}
    assert "success_rate" not in first.split('<textarea id="program"')[1].split("</textarea>")[0]

    program = json.dumps({"default": "priority", "rules": [TO_C]})
    drafted = await client.post(url, data={"csrf": csrf, "action": "draft", "program": program})
    assert drafted.status_code == 303, drafted.text
    assert drafted.headers["location"].endswith(f"{url}?version=1&notice=drafted#dry-title")
    assert await active_version(client, sandbox) is None  # nothing in force changed
    opened = (await client.get(url + "?version=1&notice=drafted")).text
    assert "Saved as draft version 1" in opened and "Showing version 1 (draft)" in opened
    assert textarea(opened)["rules"] == [TO_C]
    assert '<option value="1" selected>version 1 (draft)</option>' in opened  # its dry run next
    assert textarea((await client.get(url)).text) == {"default": "priority", "rules": []}
    assert "tries the enabled providers by priority" in await decides(client, sandbox)
    sandbox_form = (await client.get("/dashboard/sandbox")).text  # its auto says what decides too
    assert (
        "auto (routing rules, else priority)</option>" in sandbox_form and "(by priority)" not in sandbox_form
    )

    # The active one (none: priority) picks B for USD; the draft would pick C. Typed as people do.
    now = await client.post(url, data=routing_dry_run(csrf, "150.00", "USD"))
    assert now.status_code == 200 and chosen(now.text) == B, now.text
    tried = await client.post(url, data=routing_dry_run(csrf, "1,500.50", "USD", version="1"))
    assert tried.status_code == 200 and chosen(tried.text) == C, tried.text
    assert "usd-to-c, version 1" in tried.text and textarea(tried.text)["rules"] == [TO_C]  # its rules
    missing = await client.post(url, data=routing_dry_run(csrf, "150.00", "USD", version="7"))
    assert missing.status_code == 400 and "No routing version 7" in missing.text
    explicit = {**routing_dry_run(csrf, "150.00", "USD"), "provider": "provider_a_redirect_post"}
    cannot = await client.post(url, data=explicit)  # A charges CLP only: said beside the provider
    assert cannot.status_code == 400 and 'id="dry-provider-error"' in cannot.text, cannot.text

    activated = await client.post(url, data={"csrf": csrf, "action": "activate", "version": "1"})
    assert activated.status_code == 303 and await active_version(client, sandbox) == 1
    said = await decides(client, sandbox)
    assert "follows routing rules version 1" in said and "no rule matches goes by priority" in said, said
    now = await client.post(url, data=routing_dry_run(csrf, "150.00", "USD"))
    assert chosen(now.text) == C and "the active one (version 1)" in now.text
    by_rate = json.dumps({"default": "success_rate", "rules": [TO_C]})
    saved = await client.post(url, data={"csrf": csrf, "action": "save", "program": by_rate})
    assert saved.status_code == 303 and await active_version(client, sandbox) == 2
    assert "version 2" in (said := await decides(client, sandbox)) and "by success rate" in said, said
    page = (await client.get(url)).text
    assert re.search(r'<tr id="version-1">.*?earlier', page, re.DOTALL)


@pytest.mark.parametrize(
    ("amount", "currency", "field", "said"),
    [
        ("150,00", "USD", "amount", "only separates thousands"),
        ("150.005", "USD", "amount", "has 3 decimals and USD has 2"),
        ("1.5", "CLP", "amount", "has 1 decimals and CLP has none"),
        ("abc", "USD", "amount", "is not an amount"),
        ("", "USD", "amount", "Type an amount"),
        ("10", "XXX", "currency", "no minor unit"),
        ("10", "dollars", "currency", "ISO 4217 currency code"),
    ],
)
async def test_the_dry_run_reads_amounts_as_people_type_them(
    client: httpx.AsyncClient, runtime: Runtime, amount: str, currency: str, field: str, said: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    csrf = await sign_in(client, sandbox)
    url = f"/dashboard/routing/{sandbox.merchant_account_id}"
    refused = await client.post(url, data=routing_dry_run(csrf, amount, currency))
    assert refused.status_code == 400, refused.text
    message = re.search(
        rf'<p class="field-error" id="dry-{field}-error" role="alert">([^<]+)</p>', refused.text
    )
    assert message and said in html.unescape(message.group(1)), refused.text
    assert "Input should be" not in refused.text and "int_parsing" not in refused.text
    assert 'id="decision"' not in refused.text
    assert f'value="{html.escape(amount)}"' in refused.text  # what was typed is kept


async def test_a_rule_no_intent_can_meet_is_refused_beside_it(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    csrf = await sign_in(client, sandbox)
    url = f"/dashboard/routing/{sandbox.merchant_account_id}"
    odd = {
        "name": "odd",
        "if": {"currency": ["USD", "USD"], "metadata": {"": "x"}},
        "then": {"priority": [B]},
    }
    program = json.dumps({"rules": [TO_C, odd]})
    for action in ("draft", "save"):
        refused = await client.post(url, data={"csrf": csrf, "action": action, "program": program})
        assert refused.status_code == 400, refused.text
        beside = re.search(r'<li id="rule-1">(.*?)</li>', refused.text, re.DOTALL)
        assert beside, refused.text
        assert "USD is listed twice" in beside.group(1)
        assert "metadata key 1 is 0 characters" in beside.group(1)
    assert (await client.get(routing_url(sandbox, "/versions"), headers=sandbox.headers)).json()[
        "items"
    ] == []
