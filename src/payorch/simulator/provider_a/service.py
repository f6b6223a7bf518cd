"""Provider A's rules: create, the buyer's choice, commit once, status, refunds.

Simplification (docs/simulator.md, Provider A): the buyer's choice on the page is the authorization.
``status`` shows it from then on (AUTHORIZED, or FAILED for a rejection or an abort), whether
or not the commit arrived, so an unknown commit outcome can be settled from ``status``; commit
is accepted once per token, only after an approve/reject and within the token's 5 minutes.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from payorch.clock import Clock, isoformat
from payorch.db import Database
from payorch.simulator.provider_a import repository
from payorch.simulator.provider_a.wire import (
    REFUND_DAYS,
    REVERSAL_SECONDS,
    STATUS_DAYS,
    TOKEN_SECONDS,
    WireError,
)

OUTCOMES = ("approve", "reject", "cancel", "timeout", "error")
ABORTS = ("cancel", "timeout", "error")
# Test cards of the real integration environment: VISA approves, MASTERCARD rejects.
APPROVED_CARD, REJECTED_CARD = "6623", "0568"


def expires_at(row: Any) -> datetime:
    created: datetime = row.created_at
    return created + timedelta(seconds=TOKEN_SECONDS)


async def create(db: Database, clock: Clock, owner: str, fields: dict[str, Any]) -> str:
    token = secrets.token_hex(32)  # 64 characters, like the real tokens
    async with db.transaction() as conn:
        await repository.insert_transaction(
            conn,
            token=token,
            owner=owner,
            created_at=clock.now(),
            status="INITIALIZED",
            nullified_amount=0,
            **fields,
        )
    return token


def _decision(outcome: str, now: datetime) -> dict[str, Any]:
    if outcome == "approve":
        return {
            "status": "AUTHORIZED",
            "response_code": 0,
            "authorization_code": f"{secrets.randbelow(900000) + 100000}",
            "card_number": APPROVED_CARD,
            "payment_type_code": "VN",
        }
    if outcome == "reject":
        return {
            "status": "FAILED",
            "response_code": -1,
            "authorization_code": "000000",
            "card_number": REJECTED_CARD,
            "payment_type_code": "VN",
        }
    return {"status": "FAILED", "response_code": -1}  # an abort: nothing was paid


@dataclass(frozen=True)
class Decided:
    row: Any  # the transaction after the choice
    first: bool  # False when the page had already been answered (the recorded choice stands)


async def decide(db: Database, clock: Clock, token: str, outcome: str) -> Decided | None:
    """Record the buyer's choice (a late page counts as the form's timeout)."""
    now = clock.now()
    async with db.transaction() as conn:
        row = await repository.get(conn, token, for_update=True)
        if row is None:
            return None
        if now > expires_at(row):
            outcome = "timeout"
        first = await repository.decide(
            conn, token, outcome=outcome, decided_at=now, **_decision(outcome, now)
        )
        row = await repository.get(conn, token)
    return Decided(row, first)


async def page_row(db: Database, token: str) -> Any:
    async with db.transaction() as conn:
        return await repository.get(conn, token)


def transaction_body(row: Any) -> dict[str, Any]:
    """The fields of commit and status."""
    decided = row.decided_at
    balance = row.amount - row.nullified_amount if row.status != "FAILED" and decided else None
    return {
        "vci": ("TSY" if row.response_code == 0 else "TSN") if row.card_number else None,
        "amount": row.amount,
        "status": row.status,
        "buy_order": row.buy_order,
        "session_id": row.session_id,
        "card_detail": {"card_number": row.card_number} if row.card_number else None,
        "accounting_date": (decided or row.created_at).strftime("%m%d"),
        "transaction_date": isoformat(decided or row.created_at),
        "authorization_code": row.authorization_code,
        "payment_type_code": row.payment_type_code,
        "response_code": row.response_code,
        "installments_amount": None,
        "installments_number": 0,
        "balance": balance,
    }


async def commit(db: Database, clock: Clock, owner: str, token: str) -> dict[str, Any]:
    now = clock.now()
    async with db.transaction() as conn:
        row = await repository.get(conn, token, owner=owner, for_update=True)
        if row is None:
            raise WireError(404, "Transaction not found")
        if row.committed_at is not None:
            raise WireError(422, "Transaction has an invalid finished state: committed")
        if row.outcome in ABORTS:
            raise WireError(422, "Transaction has an invalid finished state: aborted")
        if now > expires_at(row):
            raise WireError(422, "Transaction has an invalid finished state: expired")
        if row.outcome is None:
            raise WireError(422, "Invalid status 0 for transaction while authorizing")
        if not await repository.mark_committed(conn, token, committed_at=now):
            raise WireError(422, "Transaction already locked by another process")
        row = await repository.get(conn, token)
    return transaction_body(row)


async def status(db: Database, clock: Clock, owner: str, token: str) -> dict[str, Any]:
    async with db.transaction() as conn:
        row = await repository.get(conn, token, owner=owner)
    if row is None:
        raise WireError(404, "Transaction not found")
    if clock.now() > row.created_at + timedelta(days=STATUS_DAYS):
        raise WireError(
            422, "The transactions's date has passed max time (7 days) to recover the status"
        )
    return transaction_body(row)


async def refund(db: Database, clock: Clock, owner: str, token: str, amount: int) -> dict[str, Any]:
    now = clock.now()
    async with db.transaction() as conn:
        row = await repository.get(conn, token, owner=owner, for_update=True)
        if row is None:
            raise WireError(404, "Transaction not found")
        if row.status in ("REVERSED", "NULLIFIED"):
            raise WireError(422, "Transaction already nullified (310)")
        if row.status not in ("AUTHORIZED", "PARTIALLY_NULLIFIED"):
            raise WireError(422, "Refund not allowed: the transaction is not authorized (16)")
        if now > row.decided_at + timedelta(days=REFUND_DAYS):
            raise WireError(422, "Refund period exceeded (284)")
        balance = row.amount - row.nullified_amount
        if amount > balance:
            raise WireError(422, "Amount exceeds the balance (311)")
        after = row.nullified_amount + amount
        reversal = (
            row.nullified_amount == 0
            and amount == row.amount
            and now <= row.decided_at + timedelta(seconds=REVERSAL_SECONDS)
        )
        state = (
            "REVERSED"
            if reversal
            else ("NULLIFIED" if after == row.amount else "PARTIALLY_NULLIFIED")
        )
        if not await repository.apply_refund(conn, token, row.nullified_amount, after, state):
            raise WireError(422, "Transaction already locked by another process")
    if reversal:
        return {"type": "REVERSED"}
    return {
        "type": "NULLIFIED",
        "authorization_code": f"{secrets.randbelow(900000) + 100000}",
        "authorization_date": isoformat(now),
        "nullified_amount": amount,
        "balance": row.amount - after,
        "response_code": 0,
    }


async def settle(
    db: Database, clock: Clock, owner: str, payment_intent_id: str, outcome: str
) -> str | None:
    """The controls' settle: decide the intent's open transaction as if the buyer had. Its token."""
    now = clock.now()
    choice = "approve" if outcome == "approve" else "reject"
    async with db.transaction() as conn:
        for row in await repository.open_for_intent(conn, owner, payment_intent_id):
            if not row.return_url.endswith("/" + payment_intent_id):
                continue  # LIKE treats "_" as a wildcard
            if row.outcome is None and await repository.decide(
                conn, row.token, outcome=choice, decided_at=now, **_decision(choice, now)
            ):
                return str(row.token)
    return None
