"""Disputes move only forward in the provider's order (issue 37): a read of the provider made
before a later state and applied after it changes nothing, and resent notices make one dispute.

The races the attack found, made exact: the simulator answers a provider read at once, but the
answer reaches payorch only when the test releases it (``HeldRead``, a slow network in front of
our in-process app), while the provider moves on and its newer notices are applied. Everything
else goes through the public interface (the buyer's page, the simulator's settle and resend
controls, payorch's notification endpoint); SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import httpx
import pytest

from payorch.app import create_app
from payorch.http.client import LocalApp
from payorch.runtime import Runtime
from tests.checkouts.helpers import _disputes, _payment, control
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import B, events_of, pay, read, start

pytestmark = pytest.mark.slow  # many payments through the simulator: a second or more each

C = "provider_c_redirect_get"
ROUNDS = 3  # each scenario, on fresh payments


class HeldRead:
    """Our app, with the next GET whose path holds ``fragment`` held: the simulator makes the
    answer at once (the provider's state at that moment); it is given back on ``release``."""

    def __init__(self) -> None:
        self.app: Any = None
        self.fragment: str | None = None
        self.made = asyncio.Event()
        self.released = asyncio.Event()

    def hold(self, fragment: str) -> None:
        self.fragment = fragment
        self.made.clear()
        self.released.clear()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        held = (
            scope["type"] == "http"
            and scope["method"] == "GET"
            and self.fragment is not None
            and self.fragment in scope["path"]
        )
        if not held:
            await self.app(scope, receive, send)
            return
        self.fragment = None  # one read only
        answer: list[Any] = []

        async def keep(message: Any) -> None:
            answer.append(message)

        await self.app(scope, receive, keep)
        self.made.set()
        await self.released.wait()
        for message in answer:
            await send(message)

    async def stale(self, fragment: str, send: Awaitable[object], then: Awaitable[None]) -> None:
        """``send`` a notice whose read (of ``fragment``) is answered now and arrives after
        ``then`` moved the provider on and its own notices were applied."""
        self.hold(fragment)
        late = asyncio.ensure_future(send)
        await asyncio.wait_for(self.made.wait(), 30)
        await then
        self.released.set()
        await asyncio.wait_for(late, 30)


@pytest.fixture
def held() -> HeldRead:
    return HeldRead()


@pytest.fixture
def local_app(held: HeldRead) -> LocalApp:
    return LocalApp(held)


@pytest.fixture
async def wired(runtime: Runtime, held: HeldRead) -> HeldRead:
    held.app = create_app(runtime=runtime)
    return held


async def settled(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, outcome: str, provider: str
) -> None:
    answer = await control(
        client, sandbox, "settle", payment_intent_id=intent_id, outcome=outcome, provider=provider
    )
    assert answer.status_code == 200, answer.text


async def moved_to(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, outcome: str, provider: str, status: str
) -> None:
    """The provider moves (its notices applied): the payment's dispute reads ``status``."""
    await settled(client, sandbox, intent_id, outcome, provider)
    assert (await dispute_of(client, sandbox, intent_id) or {}).get("status") == status


async def paid(client: httpx.AsyncClient, sandbox: Sandbox, provider: str) -> str:
    intent, body = await start(client, sandbox, provider)
    await pay(client, body, "approve")
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    return str(intent["id"])


async def dispute_of(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = (await _payment(client, sandbox, intent_id))["dispute"]
    return found


# Provider B: (opening move, kind, closing move, outcome). The approval's own notice reads
# ``approved`` before the dispute opens; that read arrives after the opening was applied.
B_DISPUTES = [
    ("chargeback", "chargeback", "chargeback_lost", "lost"),
    ("mediation", "mediation", "mediation_lost", "lost"),
    ("chargeback", "chargeback", "chargeback_won", "won"),
    ("mediation", "mediation", "mediation_won", "won"),
]


@pytest.mark.parametrize(("opening", "kind", "closing", "outcome"), B_DISPUTES)
async def test_b_an_approval_read_applied_after_the_dispute_opened_changes_nothing(
    client: httpx.AsyncClient,
    runtime: Runtime,
    wired: HeldRead,
    opening: str,
    kind: str,
    closing: str,
    outcome: str,
) -> None:
    sandbox = await mock_sandbox(runtime)
    for _ in range(ROUNDS):
        intent_id = await paid(client, sandbox, B)
        resend = control(client, sandbox, "notifications", payment_intent_id=intent_id)
        opened = moved_to(client, sandbox, intent_id, opening, B, "OPEN")
        await wired.stale("/simulator/provider_b/v1/payments/", resend, opened)
        dispute = await dispute_of(client, sandbox, intent_id)
        assert dispute is not None and dispute["status"] == "OPEN" and dispute["closed_at"] is None
        assert _disputes(await events_of(runtime, intent_id)) == [("payment.disputed", kind, None)]

        await settled(client, sandbox, intent_id, closing, B)
        expected = [("payment.disputed", kind, None), ("payment.dispute_closed", kind, outcome)]
        assert _disputes(await events_of(runtime, intent_id)) == expected
        # Every notice again, twice, newest first: one dispute, its end unchanged.
        again = await control(
            client, sandbox, "notifications", payment_intent_id=intent_id, copies=2, order="newest_first"
        )
        assert again.status_code == 200, again.text
        assert _disputes(await events_of(runtime, intent_id)) == expected
        assert (await dispute_of(client, sandbox, intent_id) or {}).get("status") == outcome.upper()


@pytest.mark.parametrize("outcome", ["lost", "won"])
async def test_c_a_stale_open_read_after_the_end_opens_no_second_dispute(
    client: httpx.AsyncClient, runtime: Runtime, wired: HeldRead, outcome: str
) -> None:
    """The opening event's read of the dispute (needs_response) arrives after the closing event
    was applied: nothing changes, and resent events make no second dispute."""
    sandbox = await mock_sandbox(runtime)
    for _ in range(ROUNDS):
        intent_id = await paid(client, sandbox, C)
        opening = control(
            client, sandbox, "settle", payment_intent_id=intent_id, outcome="chargeback", provider=C
        )
        closed = moved_to(client, sandbox, intent_id, f"chargeback_{outcome}", C, outcome.upper())
        await wired.stale("/simulator/provider_c/v1/disputes/", opening, closed)
        expected = [
            ("payment.disputed", "chargeback", None),
            ("payment.dispute_closed", "chargeback", outcome),
        ]
        assert _disputes(await events_of(runtime, intent_id)) == expected
        assert (await dispute_of(client, sandbox, intent_id) or {}).get("status") == outcome.upper()
        again = await control(
            client, sandbox, "provider_c/events", payment_intent_id=intent_id, copies=2, order="newest_first"
        )
        assert again.status_code == 200, again.text
        assert _disputes(await events_of(runtime, intent_id)) == expected
        assert (await dispute_of(client, sandbox, intent_id) or {}).get("status") == outcome.upper()
