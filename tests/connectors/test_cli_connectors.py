"""`payorch applications create --mock-connectors` and the first start add MOCK connectors."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from payorch.bootstrap import bootstrap_sandbox
from payorch.composition import build_runtime
from payorch.db.migrate import upgrade_in_thread
from payorch.providers.registry import REGISTRATIONS
from payorch.runtime import Runtime
from tests.connectors.helpers import create_with_mock_connectors
from tests.kit import make_settings

pytestmark = pytest.mark.slow

# The connectors are listed by priority.
MOCK_ORDER = sorted(REGISTRATIONS, key=lambda r: r.mock_priority)


async def test_applications_create_with_mock_connectors(
    client: httpx.AsyncClient, database_url: str, runtime: Runtime
) -> None:
    done = create_with_mock_connectors(database_url, "SANDBOX")
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    headers = {"Authorization": f"Bearer {created['api_key']}"}
    listed = await client.get(
        f"/v1/admin/merchant-accounts/{created['merchant_account_id']}/connectors", headers=headers
    )
    assert listed.status_code == 200, listed.text
    items = listed.json()["items"]
    listed_rows = [(i["provider"], i["mode"], i["priority"], i["enabled"]) for i in items]
    # One MOCK connector per registered provider at its registered priority; A and B as always.
    assert listed_rows == [(r.provider_id, "MOCK", r.mock_priority, True) for r in MOCK_ORDER]
    assert listed_rows[:2] == [
        ("provider_a_redirect_post", "MOCK", 1, True),
        ("provider_b_redirect_get", "MOCK", 2, True),
    ]


async def test_mock_connectors_are_refused_for_production(database_url: str) -> None:
    done = create_with_mock_connectors(database_url, "PRODUCTION")
    assert done.returncode == 2 and "SANDBOX" in done.stderr and done.stdout == ""


async def test_first_start_creates_a_sandbox_with_mock_connectors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'first.db'}"
    upgrade_in_thread(url)
    settings = make_settings(url)
    await bootstrap_sandbox(settings)
    printed = capsys.readouterr().out
    api_key = next(line.split()[-1] for line in printed.splitlines() if "API key:" in line)
    merchant = next(line.split()[-1] for line in printed.splitlines() if "merchant_account_id:" in line)
    runtime = build_runtime(settings)
    try:
        from payorch.app import create_app

        transport = httpx.ASGITransport(app=create_app(runtime=runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            listed = await http.get(
                f"/v1/admin/merchant-accounts/{merchant}/connectors",
                headers={"Authorization": f"Bearer {api_key}"},
            )
        assert [i["provider"] for i in listed.json()["items"]] == [r.provider_id for r in MOCK_ORDER]
        # A second start creates nothing more: no new key is printed (only where the service is).
        await bootstrap_sandbox(settings)
        again = capsys.readouterr().out
        assert "API key:" not in again and merchant in again
    finally:
        await runtime.close()
