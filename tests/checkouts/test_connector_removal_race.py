"""Removing a connector while checkouts route to it (issue 37): the removal and each checkout's
record serialise on the connector's row. A checkout that finds it removed answers 422
CONNECTOR_NOT_CONFIGURED and expires its checkout at the provider (it was a 500, a foreign-key
violation, leaving the provider's checkout open); a removal after a checkout was recorded with
the connector is refused (disable it instead). Never a 500.

The window made exact: provider B's simulator creates each checkout's preference at once, but its
answer reaches payorch only when the test releases it (``HeldCreates``, a slow network in front of
our in-process app); the removal is sent meanwhile, through the dashboard's form. Everything else
goes through HTTP; SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from payorch.app import create_app
from payorch.db.tables.providers import checkouts
from payorch.db.tables.simulator import simulator_b_preferences as preferences
from payorch.http.client import LocalApp
from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, create_intent, mock_sandbox
from tests.providers.helpers import B, checkout

pytestmark = pytest.mark.slow  # many checkouts through the simulator
CHECKOUTS = 5


class HeldCreates:
    """Our app, with the answers to provider B's preference creations held until ``release``."""

    def __init__(self) -> None:
        self.app: Any = None
        self.holding = False
        self.made = 0
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not (
            self.holding
            and scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"].endswith("/checkout/preferences")
        ):
            await self.app(scope, receive, send)
            return
        answer: list[Any] = []

        async def keep(message: Any) -> None:
            answer.append(message)

        await self.app(scope, receive, keep)
        self.made += 1
        self.arrived.set()
        await self.released.wait()
        for message in answer:
            await send(message)

    async def made_at_least(self, count: int) -> None:
        while self.made < count:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 30)


@pytest.fixture
def local_app() -> LocalApp:
    return LocalApp(HeldCreates())  # the runtime's in-process calls go through it


@pytest.fixture
async def held(runtime: Runtime, local_app: LocalApp) -> HeldCreates:
    """The runtime's gate, in front of our app (which holds nothing until told)."""
    gate = local_app.get()
    assert isinstance(gate, HeldCreates)
    gate.app = create_app(runtime=runtime)
    return gate


async def _set_up(client: httpx.AsyncClient, runtime: Runtime) -> tuple[Sandbox, str, str, list[str]]:
    """A sandbox with MOCK connectors, signed in to the dashboard; B's remove URL; intents for B."""
    sandbox = await mock_sandbox(runtime)
    csrf = await sign_in(client, sandbox)
    url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    listed = (await client.get(url, headers=sandbox.headers)).json()["items"]
    connector_id = next(c["id"] for c in listed if c["provider"] == B)
    remove = f"/dashboard/providers/{sandbox.merchant_account_id}/{connector_id}/remove"
    intents = [
        (await create_intent(client, sandbox, provider=B, amount=1500, currency="CLP"))["id"]
        for _ in range(CHECKOUTS)
    ]
    return sandbox, csrf, remove, intents


async def _recorded(runtime: Runtime, intents: list[str]) -> set[str]:
    async with runtime.database.reading() as conn:
        query = select(checkouts.c.payment_intent_id).where(checkouts.c.payment_intent_id.in_(intents))
        return {row.payment_intent_id for row in await conn.execute(query)}


async def _expired_at_provider(runtime: Runtime, intents: list[str]) -> dict[str, bool]:
    async with runtime.database.reading() as conn:
        query = select(preferences.c.external_reference, preferences.c.expires).where(
            preferences.c.external_reference.in_(intents)
        )
        return {row.external_reference: bool(row.expires) for row in await conn.execute(query)}


async def test_a_checkout_that_finds_its_connector_removed_is_a_422_and_expired_at_the_provider(
    client: httpx.AsyncClient, runtime: Runtime, held: HeldCreates
) -> None:
    sandbox, csrf, remove, intents = await _set_up(client, runtime)
    held.holding = True
    pending = [asyncio.ensure_future(checkout(client, sandbox, i)) for i in intents]
    await held.made_at_least(CHECKOUTS)  # every checkout exists at the provider, none recorded
    removed = await client.post(remove, data={"csrf": csrf})
    assert removed.status_code == 303, removed.text  # no checkout was recorded with it yet
    held.released.set()
    answers = await asyncio.gather(*pending)
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["code"] == "CONNECTOR_NOT_CONFIGURED", answer.text
    assert await _recorded(runtime, intents) == set()
    assert await _expired_at_provider(runtime, intents) == dict.fromkeys(intents, True)
    for intent_id in intents:  # nothing moved: a retry goes where routing sends it now
        read = await client.get(f"/v1/payment-intents/{intent_id}", headers=sandbox.headers)
        assert read.json()["status"] == "CREATED"


async def test_checkouts_and_a_removal_at_once_never_answer_a_500(
    client: httpx.AsyncClient, runtime: Runtime, held: HeldCreates
) -> None:
    # The answers released while the removal is sent: each record and the removal race for the
    # connector's row, in rounds.
    for _ in range(3):
        sandbox, csrf, remove, intents = await _set_up(client, runtime)
        held.holding, held.made = True, 0
        held.released.clear()
        pending = [asyncio.ensure_future(checkout(client, sandbox, i)) for i in intents]
        await held.made_at_least(CHECKOUTS)
        removal = asyncio.ensure_future(client.post(remove, data={"csrf": csrf}))
        held.released.set()
        answers = await asyncio.gather(*pending)
        removed = await removal
        statuses = [answer.status_code for answer in answers]
        assert set(statuses) <= {200, 422}, [a.text for a in answers]
        assert removed.status_code in (303, 409), removed.text  # removed, or refused on the page
        answered = {i for i, status in zip(intents, statuses, strict=True) if status == 200}
        assert await _recorded(runtime, intents) == answered
        if removed.status_code == 303:
            assert answered == set()  # removed only while no checkout was recorded with it
        at_provider = await _expired_at_provider(runtime, intents)
        assert all(at_provider[i] for i in intents if i not in answered)  # none left open
