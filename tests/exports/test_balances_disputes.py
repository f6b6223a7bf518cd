"""The balances export counts disputed money as the provider does, through HTTP on SQLite and
PostgreSQL: payments paid at simulated providers B and C, disputes opened, won and lost there
(one whose end payorch never heard of until reconciliation repaired it), and the export's
``disputed_held`` (open) and ``disputed_lost`` against the providers' own books, read from their
APIs (B's payment search, C's dispute list)."""

from __future__ import annotations

import json
from datetime import datetime, time, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime
from tests.checkouts.helpers import _payment, control, settled
from tests.kit import Sandbox, chosen_providers, mock_sandbox
from tests.providers.helpers import B
from tests.reconciliation.helpers import C, paid, reconcile

pytestmark = pytest.mark.slow  # payments and disputes at the simulator: seconds

# Per provider: (amount, the outcomes the provider goes through, heard by payorch or not).
MOVES: dict[str, list[tuple[int, tuple[str, ...], bool]]] = {
    B: [
        (10_000, ("chargeback", "chargeback_lost"), True),
        (20_000, ("mediation", "mediation_lost"), True),  # B refunds it: the mediation is lost
        (40_000, ("chargeback", "chargeback_lost"), False),  # the end's notice never got through
        (80_000, ("chargeback", "chargeback_won"), True),
        (160_000, ("chargeback",), True),
    ],
    C: [
        (5_000, ("chargeback", "chargeback_lost"), True),
        (15_000, ("chargeback",), True),
        (25_000, ("chargeback", "chargeback_won"), True),
        (35_000, ("chargeback", "chargeback_lost"), False),
    ],
}
# Written for the providers with disputes; every other registered one says why it is left out.
chosen_providers(
    *MOVES,
    left_out={
        PROVIDER_A: "its simulator has no chargeback to settle",
        PROVIDER_D: "its simulator has no chargeback to settle",
    },
)


async def provider_books(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> dict[str, list[int]]:
    """Per provider, [held, lost] as its own API shows the application's disputes."""
    b_token = registration_of(B).mock_credentials(runtime.cipher, sandbox.application_id)["access_token"]
    search = await client.get(
        "/simulator/provider_b/v1/payments/search",
        params={"limit": "1000"},
        headers={"Authorization": f"Bearer {b_token}"},
    )
    assert search.status_code == 200, search.text
    books = {B: [0, 0], C: [0, 0]}
    for payment in search.json()["results"]:
        amount = int(payment["transaction_amount"])  # CLP: whole pesos are its minor unit
        state = (payment["status"], payment["status_detail"])
        if state in (("charged_back", "in_process"), ("in_mediation", "in_mediation")):
            books[B][0] += amount
        elif state in (("charged_back", "settled"), ("refunded", "bpp_refunded")):
            books[B][1] += amount
    c_key = registration_of(C).mock_credentials(runtime.cipher, sandbox.application_id)["secret_key"]
    disputes = await client.get(
        "/simulator/provider_c/v1/disputes",
        params={"limit": "100", "created[gte]": "0"},
        headers={"Authorization": f"Bearer {c_key}"},
    )
    assert disputes.status_code == 200, disputes.text
    for dispute in disputes.json()["data"]:
        if dispute["status"] in ("needs_response", "under_review"):
            books[C][0] += dispute["amount"]
        elif dispute["status"] == "lost":
            books[C][1] += dispute["amount"]
    return books


async def exported(client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> dict[str, list[int]]:
    """Per provider, [held, lost, disputed] in today's balances (JSON lines)."""
    start = datetime.combine(runtime.clock.now().date(), time(0), runtime.clock.now().tzinfo)
    window = f"from={quote(start.isoformat())}&to={quote((start + timedelta(days=1)).isoformat())}"
    answer = await client.get(f"/v1/exports/balances?{window}&format=jsonl", headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, Any]] = [json.loads(line) for line in answer.text.splitlines()]
    found = {B: [0, 0, 0], C: [0, 0, 0]}
    for row in rows:
        if row["provider"] in found:
            found[row["provider"]] = [row["disputed_held"], row["disputed_lost"], row["disputed"]]
    return found


@pytest.mark.usefixtures("brisk_quick_retries")  # its notices fail under a held fault
async def test_the_balances_count_held_and_lost_disputes_as_the_providers_do(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    for provider, moves in MOVES.items():
        for amount, outcomes, heard in moves:
            intent = await paid(client, sandbox, provider, amount)
            *first, last = outcomes
            for outcome in first:
                await settled(client, sandbox, intent["id"], outcome, provider)
            if not heard:  # payorch cannot read the provider while its notice arrives
                await control(client, sandbox, "faults", provider=provider, mode="error")
            await settled(client, sandbox, intent["id"], last, provider)
            await control(client, sandbox, "faults", provider=provider, mode="ok")
            if heard:
                assert (await _payment(client, sandbox, intent["id"]))["dispute"] is not None

    books = await provider_books(client, runtime, sandbox)
    assert books == {B: [160_000, 70_000], C: [15_000, 40_000]}
    # Before reconciliation the unheard ends are still held in payorch's books...
    assert await exported(client, runtime, sandbox) == {
        B: [200_000, 30_000, 230_000],
        C: [50_000, 5_000, 55_000],
    }
    # ...reconciliation applies the providers' word, and the export counts as they do.
    await reconcile(client, sandbox, runtime)
    after = await exported(client, runtime, sandbox)
    assert {provider: values[:2] for provider, values in after.items()} == books
    assert after[B][2] == 230_000 and after[C][2] == 55_000  # away either way: held, then lost
