"""Provider A's rules: create, the buyer's choice, commit once, status, refunds, settle.

Simplification (docs/simulator.md, "Provider A"): the buyer's choice on the page is the
authorization. ``status`` shows it from then on (AUTHORIZED, or FAILED for a rejection or an
abort), whether or not the commit arrived, so an unknown commit outcome can be settled from
``status``; commit is accepted once per token, only after an approve/reject and within
COMMIT_WINDOW_SECONDS of it. An approval never committed in that window is reversed: from then
on it reads FAILED and cannot be committed or refunded (records.SimATransaction.as_seen).

Every function runs in the caller's transaction (``conn``) and never commits.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.simulator.provider_a import repository
from payorch.simulator.provider_a.records import (
    SimACapture,
    SimADecision,
    SimANullification,
    SimATransaction,
)
from payorch.simulator.provider_a.wire import (
    CREDIT_TYPES,
    HOLD_DAYS,
    REFUND_DAYS,
    REVERSAL_SECONDS,
    STATUS_DAYS,
    SimACaptureRequest,
    SimACreateRequest,
    SimAWireError,
)

OUTCOMES = ("approve", "reject", "cancel", "timeout", "error")
# Card brands cap retries of a declined card: after this many declines of one order's payment
# within RETRY_WINDOW, a further attempt is declined without asking the issuer (the simulator's
# stand-in for the brands' retry rules: one buy_order stands for one card and one purchase).
RETRY_CAP = 3
RETRY_WINDOW = timedelta(hours=24)
ABORTS = ("cancel", "timeout", "error")
# Test cards of the real integration environment: VISA approves, MASTERCARD rejects.
APPROVED_CARD, REJECTED_CARD = "6623", "0568"
# Why a rejection rejects: the response codes Webpay Plus documents (REST 1.2, "response_code"),
# chosen on the page as a test bank's answer; -1 unless chosen.
RESPONSE_CODES = {
    -1: "possible error entering the transaction's data",
    -2: "failed on the card's or its account's parameters",
    -3: "error in the transaction",
    -4: "rejected by the issuer",
    -5: "at risk of possible fraud",
}


def _authorization_code() -> str:
    return f"{secrets.randbelow(900000) + 100000}"


def _decision(outcome: str, response_code: int = -1) -> SimADecision:
    if outcome == "approve":
        return SimADecision(outcome, "AUTHORIZED", 0, _authorization_code(), APPROVED_CARD, "VN")
    if outcome == "reject":
        code = response_code if response_code in RESPONSE_CODES else -1
        return SimADecision(outcome, "FAILED", code, "000000", REJECTED_CARD, "VN")
    return SimADecision(outcome, "FAILED", -1)  # an abort: nothing was paid


async def create(
    conn: AsyncConnection, clock: Clock, owner: str, request: SimACreateRequest, *, deferred: bool = False
) -> str:
    """A new transaction (``deferred``: made with a deferred-capture commerce code); its token."""
    token = secrets.token_hex(32)  # 64 characters, like the real tokens
    await repository.insert_transaction(conn, token, owner, request, clock.now(), deferred=deferred)
    return token


async def _decide(
    conn: AsyncConnection, transaction: SimATransaction, decision: SimADecision, now: datetime
) -> SimATransaction | None:
    """Record the choice once; a deferred approval is held for HOLD_DAYS. The transaction as
    recorded (built from what was written: no read back), None if it was already decided."""
    held = transaction.deferred and decision.status == "AUTHORIZED"
    capture_before = now + timedelta(days=HOLD_DAYS) if held else None
    if not await repository.decide(conn, transaction.token, decision, now, capture_before):
        return None
    # The decision's fields are the transaction's columns of the same names (repository.decide).
    return replace(transaction, **asdict(decision), decided_at=now, capture_before=capture_before)


@dataclass(frozen=True, slots=True)
class Decided:
    transaction: SimATransaction  # after the choice
    first: bool  # False when the page had already been answered (the recorded choice stands)


async def decide(
    conn: AsyncConnection, clock: Clock, token: str, outcome: str, response_code: int = -1
) -> Decided | None:
    """Record the buyer's choice (a late page counts as the form's timeout); a rejection's
    ``response_code`` is one of RESPONSE_CODES."""
    now = clock.now()
    found = await repository.get(conn, token, for_update=True)
    if found is None:
        return None
    if now > found.expires_at:
        outcome = "timeout"
    if outcome == "approve" and RETRY_CAP <= await repository.declines_of_order(
        conn, found.owner, found.buy_order, since=now - RETRY_WINDOW
    ):
        outcome = "reject"  # over the brands' retry cap: declined again
    # Locked above: a transaction not decided now was decided before, as read.
    decided = await _decide(conn, found, _decision(outcome, response_code), now)
    return Decided(found if decided is None else decided, decided is not None)


async def page_transaction(conn: AsyncConnection, token: str) -> SimATransaction | None:
    """The buyer's page carries no credentials: any owner's token."""
    return await repository.get(conn, token)


async def _owned(
    conn: AsyncConnection, clock: Clock, owner: str, token: str, *, for_update: bool = False
) -> SimATransaction:
    """The owner's transaction as the API shows it now (a lapsed approval reads FAILED)."""
    found = await repository.get(conn, token, owner=owner, for_update=for_update)
    if found is None:
        raise SimAWireError(404, "Transaction not found")
    return found.as_seen(clock.now())


async def commit(conn: AsyncConnection, clock: Clock, owner: str, token: str) -> SimATransaction:
    now = clock.now()
    found = await _owned(conn, clock, owner, token, for_update=True)
    if found.committed_at is not None:
        raise SimAWireError(422, "Transaction has an invalid finished state: committed")
    if found.outcome in ABORTS or found.commit_window_over(now):
        # Past the window the approval was reversed (transbank-sdk-nodejs issue 94).
        raise SimAWireError(422, "Transaction has an invalid finished state: aborted")
    if found.outcome is None:
        if now > found.expires_at:
            raise SimAWireError(422, "Transaction has an invalid finished state: expired")
        raise SimAWireError(422, "Invalid status 0 for transaction while authorizing")
    if not await repository.mark_committed(conn, token, now):
        raise SimAWireError(422, "Transaction already locked by another process")
    return replace(found, committed_at=now).as_seen(now)  # as written (locked: no read back)


async def status(conn: AsyncConnection, clock: Clock, owner: str, token: str) -> SimATransaction:
    found = await _owned(conn, clock, owner, token)
    if clock.now() > found.created_at + timedelta(days=STATUS_DAYS):
        raise SimAWireError(422, "The transactions's date has passed max time (7 days) to recover the status")
    return found


async def refund(
    conn: AsyncConnection, clock: Clock, owner: str, token: str, amount: int
) -> SimANullification:
    now = clock.now()
    found = await _owned(conn, clock, owner, token, for_update=True)
    if found.status in ("REVERSED", "NULLIFIED"):
        raise SimAWireError(422, "Transaction already nullified (310)")
    refundable = ("AUTHORIZED", "CAPTURED", "PARTIALLY_NULLIFIED")
    if found.status not in refundable or found.decided_at is None:
        raise SimAWireError(422, "Refund not allowed: the transaction is not authorized (16)")
    if now > found.decided_at + timedelta(days=REFUND_DAYS):
        raise SimAWireError(422, "Refund period exceeded (284)")
    base = found.capturable  # a deferred one's balance counts from what was captured
    if amount > base - found.nullified_amount:
        raise SimAWireError(422, "Amount exceeds the balance (311)")
    held = found.deferred and found.captured_at is None
    if held and amount != found.amount:
        # A hold not captured is released whole (a reversal), never in part.
        raise SimAWireError(422, "Refund not allowed: a partial refund of an authorization not captured (16)")
    after = found.nullified_amount + amount
    reversal = held or (
        found.nullified_amount == 0
        and amount == base
        and now <= found.decided_at + timedelta(seconds=REVERSAL_SECONDS)
    )
    state = "REVERSED" if reversal else ("NULLIFIED" if after == base else "PARTIALLY_NULLIFIED")
    if not await repository.apply_refund(conn, token, found.nullified_amount, after, state):
        raise SimAWireError(422, "Transaction already locked by another process")
    return SimANullification(reversal, amount, base - after, _authorization_code(), now)


async def capture(
    conn: AsyncConnection, clock: Clock, owner: str, token: str, request: SimACaptureRequest
) -> SimACapture:
    """The one deferred capture of an authorization held, of at most its amount."""
    now = clock.now()
    found = await repository.get(conn, token, owner=owner, for_update=True)
    if found is None:
        raise SimAWireError(404, "Transaction not found")
    if not found.deferred:
        raise SimAWireError(
            422, "Transaction can not be captured: the commerce code is not configured for deferred capture"
        )
    if request.buy_order != found.buy_order:
        raise SimAWireError(422, "Invalid value for parameter: buy_order")
    if found.authorization_code is None or request.authorization_code != found.authorization_code:
        raise SimAWireError(422, "Invalid value for parameter: authorization_code")
    if found.captured_at is not None:
        raise SimAWireError(422, "Transaction already captured")
    if found.hold_lapsed(now):
        raise SimAWireError(
            422, f"The authorization has expired: the capture period ({HOLD_DAYS} days) was exceeded"
        )
    seen = found.as_seen(now)
    if seen.status == "AUTHORIZED" and seen.committed_at is None:
        raise SimAWireError(422, "Transaction can not be captured: it was not committed")
    if seen.status != "AUTHORIZED":
        raise SimAWireError(422, f"Transaction can not be captured: its status is {seen.status}")
    if seen.payment_type_code not in CREDIT_TYPES:
        raise SimAWireError(422, "Transaction can not be captured: only credit card payments can be captured")
    if request.capture_amount > found.amount:
        raise SimAWireError(422, "Capture amount exceeds the authorized amount")
    if not await repository.capture(conn, token, request.capture_amount, now):
        raise SimAWireError(422, "Transaction already locked by another process")
    return SimACapture(token, found.authorization_code, now, request.capture_amount)


async def advance_holds(conn: AsyncConnection, clock: Clock, owner: str, seconds: int) -> list[str]:
    """The clock control: ``owner``'s holds ``seconds`` nearer their end. The tokens of those
    past it (they read REVERSED and refuse capture from now on)."""
    now = clock.now()
    lapsed = []
    for held in await repository.holds_of(conn, owner):
        if held.capture_before is None or held.hold_lapsed(now):
            continue  # lapsed already: nothing moves
        moved = held.capture_before - timedelta(seconds=seconds)
        await repository.move_hold(conn, held.token, moved)
        if now >= moved:
            lapsed.append(held.token)
    return lapsed


async def settle(
    conn: AsyncConnection, clock: Clock, owner: str, payment_intent_id: str, outcome: str
) -> str | None:
    """The controls' settle: decide the intent's open transaction as if the buyer had. Its token."""
    choice = "approve" if outcome == "approve" else "reject"
    found = await open_transaction(conn, owner, payment_intent_id)
    if found is not None and await _decide(conn, found, _decision(choice), clock.now()) is not None:
        return found.token
    return None


async def open_transaction(
    conn: AsyncConnection, owner: str, payment_intent_id: str
) -> SimATransaction | None:
    """The intent's transaction still waiting for the buyer, if any."""
    for found in await repository.open_for_intent(conn, owner, payment_intent_id):
        if not found.return_url.endswith("/" + payment_intent_id):
            continue  # LIKE treats "_" as a wildcard
        if found.outcome is None:
            return found
    return None
