"""The buyer's page of a payment link over HTTP, on SQLite and PostgreSQL, with the simulator:
opening it creates nothing (in the buyer's language, amount in the currency's own format);
"Pay" makes the intent (carrying payment_link_id) and its checkout through the routing and the
buyer pays through every registered provider (A by a POST form); the page after paying reads the intent; max_payments
then 410; deactivated and expired links answer 410 in words; CSRF; the Pay limits."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from payorch.clock import FrozenClock, isoformat
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.registry import PROVIDER_IDS
from payorch.runtime import Runtime
from tests.kit import Sandbox, mock_sandbox
from tests.links.helpers import LINKS, create_link, intents_of, only_provider, pay_through, press_pay

pytestmark = pytest.mark.settings(
    public_url="http://testserver",
    payment_link_pay_rate_limit="4/minute",
    payment_link_pay_address_rate_limit="6/minute",
)
ES = {"Accept-Language": "es-CL,es;q=0.9,en;q=0.5"}


@pytest.mark.slow  # pays once per registered provider, and a refusal, through the simulator
# One refusal and a payment per provider: more presses than the module's Pay limits allow.
@pytest.mark.settings(public_url="http://testserver", payment_link_pay_rate_limit="1000/minute")
async def test_paid_through_every_provider_then_completed(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    link = await create_link(client, sandbox, max_payments=len(PROVIDER_IDS), metadata={"channel": "whatsapp"})
    opened = await client.get(link["url"], headers=ES)
    assert opened.status_code == 200 and 'lang="es"' in opened.text
    assert "$15.000" in opened.text and "Polera talla M" in opened.text and "shop" in opened.text
    assert await intents_of(client, sandbox) == []

    await only_provider(client, sandbox, PROVIDER_B)
    declined = await pay_through(client, link["url"], PROVIDER_B, "reject")
    assert declined.page is not None and "No pagado" in declined.page.response.text
    for provider in PROVIDER_IDS:
        await only_provider(client, sandbox, provider)
        trip = await pay_through(client, link["url"], provider)
        assert trip.page is not None, trip
        assert "/pay/" in trip.page.url and "Pago recibido" in trip.page.response.text
    made = await intents_of(client, sandbox)
    assert {intent["payment_link_id"] for intent in made} == {link["id"]}
    assert sorted(i["provider"] for i in made if i["status"] == "AUTHORIZED") == sorted(PROVIDER_IDS)
    assert all(i["metadata"] == {"channel": "whatsapp"} for i in made)

    read = (await client.get(f"{LINKS}/{link['id']}", headers=sandbox.headers)).json()
    assert (read["status"], read["payments_count"], read["amount_collected"]) == ("COMPLETED", len(PROVIDER_IDS), 15000 * len(PROVIDER_IDS))
    ended = await client.get(link["url"], headers={"Accept-Language": "pt-BR"})
    assert ended.status_code == 410 and "Ele já foi pago." in ended.text
    events = (await client.get("/v1/events", headers=sandbox.headers)).json()["items"]
    [completed] = [e for e in events if e["type"] == "payment_link.completed"]
    assert completed["data"]["payments_count"] == len(PROVIDER_IDS)
    assert completed["data"]["amount_collected"] == 15000 * len(PROVIDER_IDS)


async def test_max_payments_one_then_410(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    await only_provider(client, sandbox, PROVIDER_B)
    link = await create_link(client, sandbox)
    trip = await pay_through(client, link["url"], PROVIDER_B)
    assert trip.page is not None and "Pago recibido" in trip.page.response.text
    ended = await client.get(link["url"], headers=ES)
    assert ended.status_code == 410 and "Ya fue pagado." in ended.text
    again = await client.post(link["url"], data={"csrf": "x"})
    assert again.status_code in (403, 410)
    assert len(await intents_of(client, sandbox)) == 1


async def test_the_page_after_paying_reads_the_intent(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    await only_provider(client, sandbox, PROVIDER_B)
    link = await create_link(client, sandbox)
    declined = await pay_through(client, link["url"], PROVIDER_B, "reject")
    assert declined.page is not None
    intent_id = declined.page.url.split("payment_intent_id=")[1].split("&")[0]
    forged = await client.get(
        f"{link['url']}/done", params={"payment_intent_id": intent_id, "status": "AUTHORIZED"}
    )
    assert "Not paid" in forged.text and "received" not in forged.text
    assert f"?lang=pt&amp;payment_intent_id={intent_id}" in forged.text  # the switch keeps the intent
    other = await create_link(client, sandbox)
    foreign = await client.get(f"{other['url']}/done", params={"payment_intent_id": intent_id})
    assert foreign.status_code == 404


async def test_after_payment_url(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    await only_provider(client, sandbox, PROVIDER_B)
    link = await create_link(client, sandbox, after_payment_url="https://shop.example/thanks")
    trip = await pay_through(client, link["url"], PROVIDER_B)
    assert trip.left_to == "https://shop.example/thanks"


async def test_deactivated_and_expired_links_answer_410_in_words(
    client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock
) -> None:
    link = await create_link(client, sandbox)
    await client.post(
        f"{LINKS}/{link['id']}/deactivate", json={"message": "Sin stock"}, headers=sandbox.headers
    )
    off = await client.get(link["url"], headers=ES)
    assert off.status_code == 410
    assert "El vendedor lo desactivó." in off.text and "Sin stock" in off.text
    expiring = await create_link(client, sandbox, expires_at=isoformat(clock.now() + timedelta(days=1)))
    assert (await client.get(expiring["url"], headers=ES)).status_code == 200
    clock.advance(86400)
    gone = await client.get(expiring["url"], headers={"Accept-Language": "pt-BR"})
    assert gone.status_code == 410 and "Ele expirou em" in gone.text
    assert (await client.get("/pay/plink_unknown", headers=ES)).status_code == 404


async def test_opening_creates_nothing_and_pay_is_limited(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await only_provider(client, sandbox, PROVIDER_B)
    link = await create_link(client, sandbox, max_payments=100)
    for _ in range(50):
        assert (await client.get(link["url"])).status_code == 200
    assert await intents_of(client, sandbox) == []
    forged = await client.post(link["url"], data={"csrf": "not-the-cookie's"})
    assert forged.status_code == 403 and await intents_of(client, sandbox) == []

    pages = [(await press_pay(client, link["url"])).page for _ in range(6)]
    assert all(page is not None for page in pages)
    ended = [(page.url, page.response.status_code) for page in pages if page is not None]
    assert all("/simulator/" in url for url, _ in ended[:4]), ended
    assert [status for _, status in ended[4:]] == [429, 429]
    last = pages[-1]
    assert last is not None and "Demasiados intentos" in last.response.text
    assert last.response.headers["retry-after"]
    assert len(await intents_of(client, sandbox)) == 4  # per link: 4/minute

    other = await create_link(client, sandbox, max_payments=100)
    trips = [await press_pay(client, other["url"]) for _ in range(3)]
    statuses = [trip.page.response.status_code if trip.page else 303 for trip in trips]
    assert statuses == [429, 429, 429]  # per address: 6 presses a minute, over every link
    assert len(await intents_of(client, sandbox)) == 4
