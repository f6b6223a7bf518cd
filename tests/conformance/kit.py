"""One registered provider driven through payorch's public API: the steps every conformance case
is written in. Nothing here names a provider: what differs comes from its registration and its
driver (payorch.simulator.<name>.conformance, docs/providers.md)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast
from urllib.parse import urljoin

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.providers.registration import ProviderRegistration
from payorch.runtime import Runtime
from payorch.simulator.conformance import ConformanceDriver, ForgedNotification, ForgedReturn, Visit
from tests.checkouts.helpers import payment_count
from tests.conformance.network import HeldNotification, Network
from tests.kit import Sandbox
from tests.providers.browser import Browser, Trip
from tests.providers.helpers import checkout as post_checkout
from tests.providers.helpers import create_intent, events_of, open_checkout, query_of


def driver_of(registration: ProviderRegistration) -> ConformanceDriver:
    """The provider's driver: ``DRIVER`` in ``payorch.simulator.<simulator name>.conformance``."""
    name = f"payorch.simulator.{registration.simulator_name}.conformance"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        pytest.fail(f"{registration.provider_id} has no conformance driver: write {name} (docs/providers.md)")
    return cast(ConformanceDriver, module.DRIVER)


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass
class Checkout:
    """An intent with a checkout, and what the buyer did at the provider's page so far."""

    intent_id: str
    body: dict[str, Any]
    returned_to: str | None = None  # the genuine return address the provider gave the buyer
    capture_method: str = "automatic"


@dataclass
class Shop:
    client: httpx.AsyncClient
    runtime: Runtime
    clock: FrozenClock
    network: Network
    sandbox: Sandbox
    provider: ProviderRegistration
    driver: ConformanceDriver
    _connectors: dict[str, str] = field(default_factory=dict)
    # Notifications the network held while the buyer paid silently, for a provider whose
    # notification is its word (it sends until answered: late, never lost).
    late: list[HeldNotification] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.provider.provider_id

    @property
    def its_word(self) -> bool:
        """The provider's signed notification is its word (Notifications.authoritative,
        docs/providers.md): nothing is read back from it, and what it did is known when it says."""
        notifications = self.provider.notifications
        return notifications is not None and notifications.authoritative

    # What the kit charges here: the driver's declaration (simulator/conformance.py, Charges).
    @property
    def currency(self) -> str:
        return self.driver.charges.currency

    @property
    def amount(self) -> int:
        """A whole payment, in the currency's minor units."""
        return self.driver.charges.amount

    @property
    def part(self) -> int:
        """A piece of ``amount`` captured or refunded on its own (less than half of it)."""
        return self.driver.charges.part

    # -- intents and checkouts --------------------------------------------------------------------

    async def intent(self, amount: int | None = None) -> str:
        created = await create_intent(
            self.client, self.sandbox, amount=amount or self.amount, currency=self.currency
        )
        return str(created["id"])

    async def request_checkout(self, intent_id: str, provider: str | None = None) -> httpx.Response:
        return await post_checkout(self.client, self.sandbox, intent_id, provider or self.id)

    async def start(self, amount: int | None = None) -> Checkout:
        intent_id = await self.intent(amount)
        response = await self.request_checkout(intent_id)
        assert response.status_code == 200, response.text
        return Checkout(intent_id, response.json())

    # -- the buyer at the provider's page ---------------------------------------------------------

    async def open_page(self, checkout: Checkout) -> Trip:
        return await open_checkout(self.client, checkout.body)

    async def pay(
        self,
        checkout: Checkout,
        outcome: str,
        trip: Trip | None = None,
        chosen: Mapping[str, str] | None = None,
    ) -> Trip:
        """Press ``outcome`` on the page (``trip``'s, or a fresh visit), with ``chosen`` options
        picked in its form, and follow where it goes."""
        trip = trip or await self.open_page(checkout)
        assert trip.page is not None and trip.page.response.status_code == 200, trip
        return await Browser(self.client).press(trip.page, "outcome", outcome, chosen)

    async def press_only(self, checkout: Checkout, outcome: str, trip: Trip | None = None) -> Trip:
        """Press ``outcome`` without going back: the provider's redirect is kept in
        ``checkout.returned_to`` (a page that stays, a decline, is answered as the trip)."""
        trip = trip or await self.open_page(checkout)
        assert trip.page is not None and trip.page.response.status_code == 200, trip
        form = trip.page.form_with_button("outcome", outcome)
        url = urljoin(trip.page.url, form.action)
        fields = {**form.fields, "outcome": outcome}
        if form.method == "POST":
            response = await self.client.post(url, data=fields)
        else:
            response = await self.client.get(url, params=fields)
        if response.status_code in (302, 303):
            checkout.returned_to = urljoin(url, response.headers["location"])
            return Trip(None, checkout.returned_to, [url])
        from tests.providers.browser import parse

        return Trip(parse(str(response.url), response), None, [url])

    async def paid_silently(self, checkout: Checkout) -> None:
        """The buyer pays and never comes back, and the provider's notifications are lost."""
        self.network.hold_notifications()
        try:
            await self.press_only(checkout, "approve")
        finally:
            held = self.network.release()
        if self.its_word:
            self.late.extend(held)
        assert checkout.returned_to is not None, "approving must send the buyer back"

    def visit(self, checkout: Checkout) -> Visit:
        action = checkout.body["checkout"]
        return Visit(
            application_id=self.sandbox.application_id,
            payment_intent_id=checkout.intent_id,
            checkout_url=action["url"],
            checkout_fields=dict(action["fields"] or {}),
            returned_to=checkout.returned_to,
            capture_method=checkout.capture_method,
        )

    # -- returns and notifications ----------------------------------------------------------------

    async def send_return(self, intent_id: str, forged: ForgedReturn) -> None:
        url = f"/v1/checkout-returns/{self.id}/{intent_id}"
        if forged.method == "GET":
            response = await self.client.get(url, params=forged.params)
        else:
            response = await self.client.post(url, data=forged.params)
        assert response.status_code == 303, (forged.label, response.text)
        assert query_of(response.headers["location"])["payment_intent_id"] == intent_id, forged.label

    async def follow_return(self, checkout: Checkout) -> httpx.Response:
        assert checkout.returned_to is not None
        response = await self.client.get(checkout.returned_to)
        assert response.status_code == 303, response.text
        return response

    async def connector_id(self) -> str:
        if self.id not in self._connectors:
            listed = await self.client.get(
                f"/v1/admin/merchant-accounts/{self.sandbox.merchant_account_id}/connectors",
                headers=self.sandbox.headers,
            )
            assert listed.status_code == 200, listed.text
            self._connectors = {c["provider"]: c["id"] for c in listed.json()["items"]}
        return self._connectors[self.id]

    async def notify(self, forged: ForgedNotification) -> httpx.Response:
        headers = {"content-type": "application/json", **forged.headers} if forged.body else forged.headers
        return await self.client.post(
            f"/v1/provider-notifications/{self.id}/{await self.connector_id()}",
            params=forged.query,
            headers=headers,
            content=forged.body,
        )

    async def deliver_late(self) -> None:
        """What a provider whose notification is its word said while the network held it,
        delivered now (it sends again until it is answered)."""
        late, self.late = self.late, []
        for held in late:
            assert (await self.deliver(held)).status_code == 200, held.path

    async def after_word(self, answered: httpx.Response, read: str) -> httpx.Response:
        """A capture or void a provider whose notification is its word answered 202 (received):
        the answer once its word came (the request ends after it is delivered), read again."""
        if answered.status_code != 202 or not self.its_word:
            return answered
        again = await self.client.get(read, headers=self.sandbox.headers)
        assert again.status_code == 200, again.text
        if again.json()["status"] not in ("AUTHORIZED", "VOIDED"):
            return answered  # its word said no (still held, or lapsed meanwhile): the 202 stands
        return httpx.Response(200, headers=answered.headers, content=again.content)

    async def refund_word(self, answered: httpx.Response, payment_id: str) -> httpx.Response:
        """A refund such a provider answered 202 (received): as it stands once its word came,
        201 if it succeeded (else the 202, the refund read again)."""
        if answered.status_code != 202 or not self.its_word:
            return answered
        listed = await self.client.get(f"/v1/payments/{payment_id}/refunds", headers=self.sandbox.headers)
        now = next(r for r in listed.json()["items"] if r["refund_id"] == answered.json()["refund_id"])
        return httpx.Response(201 if now["status"] == "SUCCEEDED" else 202, json=now)

    async def deliver(self, held: HeldNotification) -> httpx.Response:
        """A notification the network held, delivered now as the provider sent it."""
        headers = {k: v for k, v in held.headers.items() if k not in ("host", "content-length")}
        url = held.path + (f"?{held.query}" if held.query else "")
        return await self.client.post(url, headers=headers, content=held.body)

    async def forged_notifications(
        self, checkout: Checkout, *, claims_paid: bool, secret: str | None = None
    ) -> list[ForgedNotification]:
        return await self.driver.notifications(
            self.client,
            self.runtime.cipher,
            self.visit(checkout),
            claims_paid=claims_paid,
            secret=secret,
            now=self.clock.now(),
        )

    # -- reading back -----------------------------------------------------------------------------

    async def read(self, intent_id: str) -> dict[str, Any]:
        response = await self.client.get(f"/v1/payment-intents/{intent_id}", headers=self.sandbox.headers)
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def status(self, intent_id: str) -> str:
        return str((await self.read(intent_id))["status"])

    async def event_types(self, intent_id: str) -> list[str]:
        return [e["type"] for e in await events_of(self.runtime, intent_id)]

    async def assert_authorized_once(self, intent_id: str, label: str = "") -> None:
        assert await self.status(intent_id) == "AUTHORIZED", label
        assert await payment_count(self.runtime, intent_id) == 1, label
        assert (await self.event_types(intent_id)).count("payment.authorized") == 1, label

    async def assert_not_paid(self, intent_id: str, label: str = "") -> None:
        assert await self.status(intent_id) != "AUTHORIZED", label
        assert await payment_count(self.runtime, intent_id) == 0, label
        assert "payment.authorized" not in await self.event_types(intent_id), label

    # -- simulator controls -----------------------------------------------------------------------

    async def set_fault(self, mode: str, provider: str | None = None) -> None:
        response = await self.client.post(
            "/simulator/controls/faults",
            json={"provider": provider or self.id, "mode": mode},
            headers=self.sandbox.headers,
        )
        assert response.status_code == 200, response.text

    async def settle(self, intent_id: str, outcome: str) -> None:
        response = await self.client.post(
            "/simulator/controls/settle",
            json={"payment_intent_id": intent_id, "outcome": outcome, "provider": self.id},
            headers=self.sandbox.headers,
        )
        assert response.status_code == 200, response.text


def needs_read_back(shop: Shop, why: str) -> None:
    """Skip a case that reads the provider back (or trusts a notification only once read) for a
    provider whose notification is its word: nothing can be read from it (docs/providers.md)."""
    if shop.its_word:
        pytest.skip(f"{shop.id}'s notification is its word: {why}")


def needs_notifications(shop: Shop) -> None:
    """Skip the test for a provider that sends no notifications."""
    if not shop.provider.adapter.supports_notifications:
        pytest.skip(f"{shop.id} sends no notifications")
