"""The intent page's outcome in Debian's Chromium against a live `payorch serve` (API, simulator,
worker), SQLite and PostgreSQL: a decline at A, B and C, a provider error at each (A's error page,
B's test cardholder ERRO, C's test card 0119 left processing, then failed), a cancelled, a
processing and an authorized intent, each made by the simulated buyer as a real one would and
read in the browser. B's and C's simulator pages offer their test choices in Chromium too.
Screenshots (failed, processing, authorized, the two simulator pages) at 1280 and 390 px go to
PAYORCH_E2E_SCREENSHOTS or build/screenshots/ (git-ignored)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.provider_c import PROVIDER_C
from payorch.providers.provider_d import PROVIDER_D
from tests import browser as web
from tests.checkouts.helpers import B_CARD_ERROR, C_PROCESSING_ERROR, Choice, by_page
from tests.kit import create_intent, each_provider_has_cases
from tests.live import as_sandbox, create_sandbox
from tests.providers import browser as buyer_browser
from tests.providers.browser import Browser, parse

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

A, B, C, D = PROVIDER_A, PROVIDER_B, PROVIDER_C, PROVIDER_D
# Each has its decline and its provider error below, in its own words (the cases' suffixes).
SHOWN = {A: "a", B: "b", C: "c", D: "d"}
# Provider D's buyer refuses with reason 4, "Acquirer Error": the acquirer failed, not the buyer.
D_ACQUIRER_ERROR: Choice = ("reject", "reason", "4", False)
ONLY = ("approve", "decline", "give_up", "pending")
SHOT = ("provider-error-a", "provider-error-b", "provider-error-c", "provider-error-d", "declined-b", "processing", "authorized")


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url) as found:
        yield found


class Shop:
    """The shop's API calls and its buyer, against the live server."""

    def __init__(self, api: httpx.AsyncClient, app: dict[str, str]) -> None:
        self.api, self.app = api, app

    async def start(self, provider: str) -> tuple[str, dict[str, Any]]:
        created = await create_intent(
            self.api,
            as_sandbox(self.app),
            external_reference=f"order-{provider[-8:]}",
            amount=15000,
            provider=provider,
        )
        intent_id = created["id"]
        checkout = await self.api.post(f"/v1/payment-intents/{intent_id}/checkout", json={})
        assert checkout.status_code == 200, checkout.text
        return intent_id, checkout.json()

    async def by_market(self, provider: str, outcome: str) -> str:
        """The simulated market's buyer decides (``outcome`` with probability 1) and comes back."""
        market = {"provider": provider, **{o: 1.0 if o == outcome else 0.0 for o in ONLY}}
        assert (await self.api.post("/simulator/controls/market", json=market)).status_code == 200
        intent_id, _ = await self.start(provider)
        bought = await self.api.post("/simulator/controls/market/buy", json={"payment_intent_id": intent_id})
        assert bought.status_code == 200, bought.text
        back = bought.json()["return"]
        trip = await Browser(self.api).open(back["url"], back["method"], back["fields"] or None)
        assert trip.left_to and trip.left_to.startswith("https://shop.example/"), trip
        return intent_id

    async def by_button(self, button: str) -> str:
        """Provider A's page, its ``button`` pressed (``error``: its error page)."""
        intent_id, body = await self.start(A)
        action = body["checkout"]
        page = await self.api.post(action["url"], data=action["fields"])
        trip = await Browser(self.api).press(parse(str(page.url), page), "outcome", button)
        assert trip.left_to and trip.left_to.startswith("https://shop.example/"), trip
        return intent_id

    async def by_test_choice(self, provider: str, choice: Choice) -> str:
        """The buyer's test choice on B's or C's page (docs/simulator.md), back at the shop."""
        intent_id, body = await self.start(provider)
        back = await by_page(self.api, dict(self.api.headers), intent_id, body, choice)
        trip = await Browser(self.api).open(back)
        assert trip.left_to and trip.left_to.startswith("https://shop.example/"), trip
        return intent_id

    async def status(self, intent_id: str) -> str:
        """The intent's status once the buyer's return has been answered: provider D's outcome is
        its signed notification, which the simulator's outbox sends after the page's answer, so
        it may come after the buyer (then it ends the checkout: CheckoutRef.buyer_returned)."""
        deadline = time.monotonic() + 30
        while True:
            status = str((await self.api.get(f"/v1/payment-intents/{intent_id}")).json()["status"])
            if status != "REQUIRES_ACTION" or time.monotonic() > deadline:
                return status
            await asyncio.sleep(0.1)


async def test_the_intent_page_says_why_in_a_browser(
    server: web.Server, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, env = server
    monkeypatch.setattr(buyer_browser, "OWN_ORIGIN", url)  # the buyer stays here
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api:
        shop = Shop(api, app)
        made = {
            "declined-a": await shop.by_market(A, "decline"),
            "declined-b": await shop.by_market(B, "decline"),
            "declined-c": await shop.by_market(C, "decline"),
            "declined-d": await shop.by_market(D, "decline"),
            "provider-error-a": await shop.by_button("error"),
            "provider-error-b": await shop.by_test_choice(B, B_CARD_ERROR),
            "provider-error-c": await shop.by_test_choice(C, C_PROCESSING_ERROR),
            "provider-error-d": await shop.by_test_choice(D, D_ACQUIRER_ERROR),
            "cancelled": await shop.by_button("cancel"),
            "processing": await shop.by_market(B, "pending"),
            "authorized": await shop.by_button("approve"),
        }
        seen = {name: await shop.status(intent_id) for name, intent_id in made.items()}
        simulator_pages = {
            "simulator-b": ((await shop.start(B))[1]["checkout"]["url"], B_CARD_ERROR),
            "simulator-c": ((await shop.start(C))[1]["checkout"]["url"], C_PROCESSING_ERROR),
        }
    assert seen == {
        **dict.fromkeys((f"{case}-{own}" for case in ("declined", "provider-error") for own in SHOWN.values()), "FAILED"),
        "cancelled": "CANCELLED",
        "processing": "PROCESSING",
        "authorized": "AUTHORIZED",
    }
    # What each page's outcome says (its first lines); AUTHORIZED has none.
    expected = {
        "declined-a": ["The payment was declined (code declined).", f"{A} answered -1: ", "another card"],
        "declined-b": [f"{B} answered cc_rejected_other_reason: ", "another card"],
        "declined-c": [f"{C} answered generic_decline: ", "another card"],
        "declined-d": [f"{D} answered 2: ", "another card"],
        "provider-error-a": ["(code provider_error)", "error page", "The provider failed, not the buyer"],
        "provider-error-b": [
            "(code provider_error)",
            f"{B} answered cc_rejected_card_error: The card could not be processed.",
            "The provider failed, not the buyer",
        ],
        "provider-error-c": [
            "(code provider_error)",
            f"{C} answered processing_error: An error occurred while processing the card.",
            "The provider failed, not the buyer",
        ],
        "provider-error-d": ["(code provider_error)", f"{D} answered 4: Acquirer Error", "The provider failed, not the buyer"],
        "cancelled": ["Cancelled; nothing was charged.", "(code cancelled_by_buyer)"],
        "processing": [f"Waiting for {B} to confirm or refuse the payment", f"payorch asks {B} again at"],
    }

    async with web.chromium() as browser:
        page = await web.page_at(browser)
        await web.keep_to_host(page, url)
        await web.sign_in(page, url, app["api_key"])
        for name, intent_id in made.items():
            await page.goto(f"{url}/dashboard/payments/{intent_id}")
            outcome = page.locator("#outcome")
            if name == "authorized":
                assert await outcome.count() == 0
                assert await page.get_by_text("Refunded").count() == 1
            else:
                said = await outcome.inner_text()
                for words in expected[name]:
                    assert words in said, (name, words, said)
            if name in SHOT:
                await web.screenshot(page, shots, f"intent-{name}")
        # B's and C's pages offer the test choices the provider errors above were made with.
        for name, (checkout_url, choice) in simulator_pages.items():
            await page.goto(checkout_url)
            chosen = page.locator(f"select[name={choice[1]}]")
            await chosen.select_option(choice[2])
            assert await chosen.input_value() == choice[2]
            await web.screenshot(page, shots, f"intent-{name}")


def test_every_registered_provider_has_its_cases_here() -> None:
    each_provider_has_cases(set(SHOWN), "SHOWN")
