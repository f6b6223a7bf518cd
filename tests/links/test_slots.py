"""max_payments is exact under concurrency: "Pay" takes a slot before the intent exists, so
buyers pressing "Pay" on a link's last slot at the same moment get one checkout between them;
the others get a 409 page saying someone else is paying. A slot comes back when its buyer's
payment does not go through. On SQLite and PostgreSQL, over many rounds."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from payorch.providers.provider_b import PROVIDER_B
from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.links.helpers import LINKS, create_link, intents_of, only_provider, pay_through
from tests.providers.browser import Browser

pytestmark = pytest.mark.settings(
    public_url="http://testserver",
    payment_link_pay_rate_limit="1000/minute",
    payment_link_pay_address_rate_limit="1000/minute",
)
ROUNDS = 12
BUYERS = 5


async def _pay_at_once(client: httpx.AsyncClient, url: str, buyers: int) -> list[httpx.Response]:
    opened = await client.get(url, params={"lang": "es"})
    assert opened.status_code == 200, opened.text
    token = client.cookies.get("payorch_pay")
    form = {"csrf": token, "pay": "1", "lang": "es"}
    return list(await asyncio.gather(*(client.post(url, data=form) for _ in range(buyers))))


@pytest.mark.slow  # ROUNDS x BUYERS presses of Pay at once
async def test_buyers_paying_the_last_slots_at_once_get_one_checkout_each_slot(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await only_provider(client, sandbox, PROVIDER_B)
    for round_ in range(ROUNDS):
        slots = 1 + round_ % 2
        link = await create_link(client, sandbox, max_payments=slots)
        answers = await _pay_at_once(client, link["url"], BUYERS)
        started = [a for a in answers if a.status_code == 303 and "/simulator/" in a.headers["location"]]
        taken = [a for a in answers if a.status_code == 409]
        assert (len(started), len(taken)) == (slots, BUYERS - slots), [a.status_code for a in answers]
        assert all("Otra persona está pagando" in a.text and a.headers["retry-after"] for a in taken)
        made = [i for i in await intents_of(client, sandbox) if i["payment_link_id"] == link["id"]]
        assert len(made) == slots, (round_, made)


async def test_a_slot_comes_back_when_its_payment_does_not_go_through(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await only_provider(client, sandbox, PROVIDER_B)
    link = await create_link(client, sandbox)
    [holder, waiting] = await _pay_at_once(client, link["url"], 2)
    assert sorted((holder.status_code, waiting.status_code)) == [303, 409]
    first = holder if holder.status_code == 303 else waiting
    trip = await _decline(client, first.headers["location"])
    assert "No pagado" in trip.text
    paid = await pay_through(client, link["url"], PROVIDER_B)
    assert paid.page is not None and "Pago recibido" in paid.page.response.text
    read = (await client.get(f"{LINKS}/{link['id']}", headers=sandbox.headers)).json()
    assert (read["status"], read["payments_count"]) == ("COMPLETED", 1)
    statuses = sorted(i["status"] for i in await intents_of(client, sandbox))
    assert statuses == ["AUTHORIZED", "FAILED"]
    assert (await client.get(link["url"])).status_code == 410


async def _decline(client: httpx.AsyncClient, simulator_url: str) -> httpx.Response:
    """The holder's buyer declines at the simulator's page and comes back to payorch."""
    trip = await Browser(client).open(simulator_url)
    assert trip.page is not None
    back = await Browser(client).press(trip.page, "outcome", "reject")
    assert back.page is not None, back
    return back.page.response
