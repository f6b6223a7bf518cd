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
from sqlalchemy import update

from payorch.app import create_app
from payorch.db.tables.providers import payments
from payorch.http.client import LocalApp
from payorch.runtime import Runtime
from tests.checkouts.helpers import _disputes, _payment, control, settled
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import B, events_of, pay, read, set_fault, start

pytestmark = [
    pytest.mark.slow,  # many payments through the simulator: a second or more each
    # The concurrent rounds poll the simulator every 10 ms from several tasks at once: more
    # than the default 100 requests a second of one application (a 429 failed a CI run).
    pytest.mark.settings(rate_limit="100000/second"),
]

C = "provider_c_redirect_get"
ROUNDS = 3  # each scenario, on fresh payments
CONCURRENT_ROUNDS = 15


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


@pytest.fixture(autouse=True)
async def wired(runtime: Runtime, held: HeldRead) -> HeldRead:
    """Every test of the module: our app behind ``held`` (which holds nothing until told)."""
    held.app = create_app(runtime=runtime)
    return held


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


async def settle_when_possible(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, outcome: str, provider: str
) -> None:
    """The settle control, again until the provider has something in the state it starts from
    (its previous move may still be committing beside it)."""
    for _ in range(200):
        answer = await control(
            client, sandbox, "settle", payment_intent_id=intent_id, outcome=outcome, provider=provider
        )
        if answer.status_code == 200:
            return
        # 404: not in that state yet; 503: the database was busy (SQLite under load): again.
        assert answer.status_code in (404, 503), answer.text
        await asyncio.sleep(0.01)
    raise AssertionError(f"{outcome} never possible")


# (provider, opening, kind, closing, outcome, the control that sends the provider's notices again)
RACES = [
    (B, "chargeback", "chargeback", "chargeback_lost", "lost", "notifications"),
    (B, "mediation", "mediation", "mediation_lost", "lost", "notifications"),
    (C, "chargeback", "chargeback", "chargeback_lost", "lost", "provider_c/events"),
]


@pytest.mark.parametrize(("provider", "opening", "kind", "closing", "outcome", "resend"), RACES)
async def test_concurrent_notices_and_moves_end_as_the_provider_says(
    client: httpx.AsyncClient,
    runtime: Runtime,
    provider: str,
    opening: str,
    kind: str,
    closing: str,
    outcome: str,
    resend: str,
) -> None:
    """The attack's race without a held read: the provider's notices are sent again while it
    opens and then closes the dispute, all at once; every round ends as the provider says."""
    sandbox = await mock_sandbox(runtime)
    wrong = []
    for _ in range(CONCURRENT_ROUNDS):
        intent_id = await paid(client, sandbox, provider)
        again = [control(client, sandbox, resend, payment_intent_id=intent_id, copies=2) for _ in range(2)]
        await asyncio.gather(
            settle_when_possible(client, sandbox, intent_id, opening, provider),
            *again,
            settle_when_possible(client, sandbox, intent_id, closing, provider),
        )
        await control(client, sandbox, resend, payment_intent_id=intent_id, copies=2, order="newest_first")
        expected = [("payment.disputed", kind, None), ("payment.dispute_closed", kind, outcome)]
        disputes = _disputes(await events_of(runtime, intent_id))
        status = (await dispute_of(client, sandbox, intent_id) or {}).get("status")
        if disputes != expected or status != outcome.upper():
            wrong.append((status, disputes))
    assert wrong == []


async def unseen_then(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, opening: str, losing: str
) -> None:
    """B opens a dispute whose notice never gets through (our reads of it fail), then loses it."""
    await set_fault(client, sandbox, B, "error")
    await settled(client, sandbox, intent_id, opening, B)
    await set_fault(client, sandbox, B, "ok")
    await moved_to(client, sandbox, intent_id, losing, B, "LOST")


@pytest.mark.usefixtures("brisk_quick_retries")  # its notices fail under a held fault
async def test_b_a_chargeback_lost_after_a_won_mediation_is_a_second_dispute_even_unseen_open(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The mediation was won; the chargeback that followed was never read open (its notice
    failed): its loss is another dispute, recorded with its opening, not swallowed by the WON."""
    sandbox = await mock_sandbox(runtime)
    intent_id = await paid(client, sandbox, B)
    await moved_to(client, sandbox, intent_id, "mediation", B, "OPEN")
    await moved_to(client, sandbox, intent_id, "mediation_won", B, "WON")
    await unseen_then(client, sandbox, intent_id, "chargeback", "chargeback_lost")
    assert _disputes(await events_of(runtime, intent_id)) == [
        ("payment.disputed", "mediation", None),
        ("payment.dispute_closed", "mediation", "won"),
        ("payment.disputed", "chargeback", None),
        ("payment.dispute_closed", "chargeback", "lost"),
    ]


@pytest.mark.usefixtures("brisk_quick_retries")  # its notices fail under a held fault
async def test_b_a_mediation_lost_is_recorded_even_when_its_opening_was_never_read(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """``refunded`` by the buyer protection program (``bpp_refunded``) is a mediation lost:
    recorded with its opening when the mediation's own notice never got through."""
    sandbox = await mock_sandbox(runtime)
    intent_id = await paid(client, sandbox, B)
    await unseen_then(client, sandbox, intent_id, "mediation", "mediation_lost")
    assert _disputes(await events_of(runtime, intent_id)) == [
        ("payment.disputed", "mediation", None),
        ("payment.dispute_closed", "mediation", "lost"),
    ]


async def test_b_a_won_left_by_an_earlier_stale_read_becomes_lost_when_the_provider_says_so(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """A payment the previous version recorded WON from a stale approval (written here as that
    version left it): the provider's newer ``charged_back/settled`` makes it LOST, and
    ``payment.dispute_closed`` is sent again with the provider's outcome."""
    sandbox = await mock_sandbox(runtime)
    intent_id = await paid(client, sandbox, B)
    await moved_to(client, sandbox, intent_id, "chargeback", B, "OPEN")
    payment_id = (await _payment(client, sandbox, intent_id))["id"]
    async with runtime.database.transaction() as conn:
        await conn.execute(
            update(payments)
            .where(payments.c.id == payment_id)
            .values(dispute_status="WON", dispute_closed_at=runtime.clock.now())
        )
    await moved_to(client, sandbox, intent_id, "chargeback_lost", B, "LOST")
    assert _disputes(await events_of(runtime, intent_id))[-1] == (
        "payment.dispute_closed",
        "chargeback",
        "lost",
    )


async def test_b_the_approvals_own_notice_read_before_the_chargeback_changes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, wired: HeldRead
) -> None:
    """The attack exactly: the buyer pays; the approval's own notice reads ``approved`` and that
    answer arrives after the chargeback right behind it was recorded (its notice authorizes the
    payment and opens the dispute). The approval changes nothing; the provider's LOST stands."""
    sandbox = await mock_sandbox(runtime)
    for _ in range(ROUNDS):
        intent, body = await start(client, sandbox, B)
        intent_id = str(intent["id"])
        buyer = pay(client, body, "approve")
        opened = moved_to(client, sandbox, intent_id, "chargeback", B, "OPEN")
        await wired.stale("/simulator/provider_b/v1/payments/", buyer, opened)
        assert (await read(client, sandbox, intent_id))["status"] == "AUTHORIZED"
        assert (await dispute_of(client, sandbox, intent_id) or {}).get("status") == "OPEN"
        await moved_to(client, sandbox, intent_id, "chargeback_lost", B, "LOST")
        assert _disputes(await events_of(runtime, intent_id)) == [
            ("payment.disputed", "chargeback", None),
            ("payment.dispute_closed", "chargeback", "lost"),
        ]


async def test_c_two_disputes_in_turn_stay_two_whatever_is_sent_again(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """A chargeback won, then another one lost on the same payment: every event sent again,
    twice, newest first and oldest first, leaves exactly the two disputes (one per id)."""
    sandbox = await mock_sandbox(runtime)
    intent_id = await paid(client, sandbox, C)
    moves = [
        ("chargeback", "OPEN"),
        ("chargeback_won", "WON"),
        ("chargeback", "OPEN"),
        ("chargeback_lost", "LOST"),
    ]
    for outcome, status in moves:
        await moved_to(client, sandbox, intent_id, outcome, C, status)
    expected = [
        ("payment.disputed", "chargeback", None),
        ("payment.dispute_closed", "chargeback", "won"),
        ("payment.disputed", "chargeback", None),
        ("payment.dispute_closed", "chargeback", "lost"),
    ]
    assert _disputes(await events_of(runtime, intent_id)) == expected
    for order in ("newest_first", "oldest_first"):
        again = await control(
            client, sandbox, "provider_c/events", payment_intent_id=intent_id, copies=2, order=order
        )
        assert again.status_code == 200, again.text
    assert _disputes(await events_of(runtime, intent_id)) == expected
    assert (await dispute_of(client, sandbox, intent_id) or {}).get("status") == "LOST"
