"""Payment links in the dashboard over HTTP (an owner signed in as themselves), from the command
line and from the Python client, on SQLite and PostgreSQL: the amount typed under the one
amount rule, the link's page with its URL, QR code (SVG) and payments, deactivation with a
message; `payorch links create|list|deactivate` logged as "system"."""

from __future__ import annotations

import html
import json

import httpx
import pytest

from payorch.app import create_app
from payorch.client import AsyncPayorchClient
from payorch.runtime import Runtime
from tests.cli_in_process import cli
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox
from tests.links.helpers import LINKS, activity
from tests.live import payorch_env, run_cli

pytestmark = pytest.mark.settings(public_url="http://pay.example")


async def test_made_and_deactivated_in_the_dashboard(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    csrf = await sign_in(client, sandbox)
    form = {"csrf": csrf, "merchant_account_id": sandbox.merchant_account_id, "currency": "USD"}
    typed = {"amount": "10,50", "description": "Cap", "max_payments": "3", "external_reference": "ord-9"}
    refused = await client.post("/dashboard/links", data={**form, **typed})
    # The form again, the amount's problem beside it (the one amount rule's words), what was
    # typed kept, nothing made.
    assert refused.status_code == 400 and 'id="amount-error" role="alert"' in refused.text
    error = html.unescape(refused.text.split('id="amount-error" role="alert">')[1].split("</p>")[0])
    assert "only separates thousands" in error and "USD with '.' before at most 2 decimals" in error
    assert 'aria-invalid="true"' in refused.text and "<option selected>USD</option>" in refused.text
    assert all(f'value="{value}"' in refused.text for value in typed.values())
    assert 'id="description-error"' not in refused.text and "Not created" in refused.text
    bad_date = await client.post(
        "/dashboard/links", data={**form, **typed, "amount": "1", "expires_at": "soon"}
    )
    assert bad_date.status_code == 400 and 'id="expires_at-error"' in bad_date.text
    assert (await client.get(LINKS, headers=sandbox.headers)).json()["items"] == []
    made = await client.post("/dashboard/links", data={**form, "amount": "1,234.50", "description": "Cap"})
    assert made.status_code == 303, made.text
    page = await client.get(made.headers["location"])
    assert page.status_code == 200
    link_id = made.headers["location"].split("/links/")[1].split("?")[0]
    assert f"http://pay.example/pay/{link_id}" in page.text
    assert 'src="data:image/svg+xml' in page.text and "$1,234.50" in page.text
    read = (await client.get(f"{LINKS}/{link_id}", headers=sandbox.headers)).json()
    assert (read["amount"], read["currency"], read["status"]) == (123450, "USD", "ACTIVE")
    listed = await client.get("/dashboard/links")
    assert link_id in listed.text
    off = await client.post(f"/dashboard/links/{link_id}/deactivate", data={"csrf": csrf, "message": "Gone"})
    assert off.status_code == 303
    read = (await client.get(f"{LINKS}/{link_id}", headers=sandbox.headers)).json()
    assert (read["status"], read["buyer_message"]) == ("DEACTIVATED", "Gone")
    [entry] = await activity(client, sandbox, "payment_link.deactivated")
    assert entry["actor"]["type"] == "user"
    forged = await client.post(f"/dashboard/links/{link_id}/deactivate", data={"csrf": "x"})
    assert forged.status_code == 403


async def test_the_python_client(client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    async with AsyncPayorchClient(sandbox.api_key, "http://testserver", transport=transport) as api:
        made = await api.create_payment_link(
            merchant_account_id=sandbox.merchant_account_id,
            amount=15000,
            currency="CLP",
            description="Polera",
        )
        assert made.url == f"http://pay.example/pay/{made.id}" and made.status == "ACTIVE"
        assert (await api.get_payment_link(made.id)).id == made.id
        assert [link.id for link in (await api.list_payment_links(status=["ACTIVE"])).items] == [made.id]
        off = await api.deactivate_payment_link(made.id, message="Agotado")
        assert (off.status, off.buyer_message) == ("DEACTIVATED", "Agotado")


@pytest.mark.slow  # runs the command line
async def test_the_command_line(client: httpx.AsyncClient, sandbox: Sandbox, database_url: str) -> None:
    env = payorch_env(database_url, PAYORCH_PUBLIC_URL="http://pay.example")
    app = ["--application-id", sandbox.application_id]
    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
    made = run_cli(
        [
            "links",
            "create",
            *app,
            "--merchant",
            sandbox.merchant_account_id,
            "--amount",
            "15,000",
            "--currency",
            "CLP",
            "--description",
            "Polera",
            "--max-payments",
            "2",
            "--json",
        ],
        env,
    )
    assert made.returncode == 0, made.stderr
    link = json.loads(made.stdout)
    assert (link["amount"], link["max_payments"], link["status"]) == (15000, 2, "ACTIVE")
    assert link["url"] == f"http://pay.example/pay/{link['id']}"
    bad = cli(
        [
            "links",
            "create",
            *app,
            "--merchant",
            sandbox.merchant_account_id,
            "--amount",
            "15.5",
            "--currency",
            "CLP",
            "--description",
            "x",
        ],
        env,
    )
    assert bad.returncode == 1 and "amount" in bad.stderr
    listed = cli(["links", "list", *app], env)
    assert listed.returncode == 0 and link["id"] in listed.stdout and "ACTIVE" in listed.stdout
    off = cli(["links", "deactivate", *app, link["id"], "--message", "Agotado", "--json"], env)
    assert off.returncode == 0, off.stderr
    assert json.loads(off.stdout)["status"] == "DEACTIVATED"
    [entry] = await activity(client, sandbox, "payment_link.deactivated")
    assert entry["actor"] == {"type": "system", "id": "operator", "email": None}
