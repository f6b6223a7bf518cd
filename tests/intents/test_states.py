"""The state machine: every allowed and every refused move, in the database and as a model."""

from __future__ import annotations

import itertools

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from sqlalchemy import update

from payorch.db.tables import payment_intents
from payorch.errors import InvalidState
from payorch.events import repository as events_repository
from payorch.intents import repository, service
from payorch.intents.states import (
    EVENTS_OF_MOVE,
    FINAL,
    TRANSITIONS,
    IntentStatus,
    Move,
    allowed,
    next_status,
)
from payorch.runtime import Runtime
from tests.events.samples import sample_payloads
from tests.kit import Sandbox, create_intent

S, M = IntentStatus, Move

EXPECTED = {
    (S.CREATED, M.START_CHECKOUT): S.REQUIRES_ACTION,
    (S.REQUIRES_ACTION, M.START_CHECKOUT): S.REQUIRES_ACTION,
    (S.REQUIRES_ACTION, M.PROCESS): S.PROCESSING,
    (S.REQUIRES_ACTION, M.AUTHORIZE): S.AUTHORIZED,
    (S.PROCESSING, M.AUTHORIZE): S.AUTHORIZED,
    (S.REQUIRES_ACTION, M.HOLD): S.REQUIRES_CAPTURE,  # capture_method manual: held
    (S.PROCESSING, M.HOLD): S.REQUIRES_CAPTURE,
    (S.REQUIRES_CAPTURE, M.CAPTURE): S.AUTHORIZED,
    (S.REQUIRES_CAPTURE, M.VOID): S.CANCELLED,
    (S.REQUIRES_CAPTURE, M.EXPIRE): S.EXPIRED,  # the hold lapsed
    (S.REQUIRES_ACTION, M.FAIL): S.FAILED,
    (S.REQUIRES_ACTION, M.DECLINE_ATTEMPT): S.REQUIRES_ACTION,  # a second chance: the buyer may pay elsewhere
    (S.PROCESSING, M.FAIL): S.FAILED,
    (S.CREATED, M.CANCEL): S.CANCELLED,
    (S.REQUIRES_ACTION, M.CANCEL): S.CANCELLED,
    (S.REQUIRES_ACTION, M.EXPIRE): S.EXPIRED,
    (S.AUTHORIZED, M.REFUND_PART): S.PARTIALLY_REFUNDED,
    (S.AUTHORIZED, M.REFUND_REST): S.REFUNDED,
    (S.PARTIALLY_REFUNDED, M.REFUND_PART): S.PARTIALLY_REFUNDED,
    (S.PARTIALLY_REFUNDED, M.REFUND_REST): S.REFUNDED,
}


def test_the_table_is_exactly_the_decided_one() -> None:
    assert TRANSITIONS == EXPECTED


def test_final_states_have_no_way_out() -> None:
    assert FINAL == {S.FAILED, S.CANCELLED, S.EXPIRED, S.REFUNDED}
    for status, move in itertools.product(FINAL, Move):
        assert not allowed(status, move)
        with pytest.raises(InvalidState):
            next_status(status, move)


@pytest.mark.parametrize(("status", "move"), list(itertools.product(IntentStatus, Move)))
async def test_every_move_in_the_database(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    status: IntentStatus,
    move: Move,
) -> None:
    intent_id = (await create_intent(client, sandbox))["id"]
    async with runtime.database.transaction() as conn:  # put the intent in the starting state
        await conn.execute(
            update(payment_intents).where(payment_intents.c.id == intent_id).values(status=status.value)
        )
    async with runtime.database.transaction() as conn:
        before = len(await events_repository.timeline(conn, intent_id))
    expected = EXPECTED.get((status, move))
    try:
        async with runtime.database.transaction() as conn:
            row = await repository.get(conn, sandbox.application_id, intent_id, for_update=True)
            provider = "provider_a" if move is Move.START_CHECKOUT else None
            payloads = sample_payloads(move, intent_id)  # the data of each event the move emits
            new = await service.apply_move(conn, runtime.clock, row, move, *payloads, provider=provider)
    except InvalidState as error:
        assert expected is None
        allowed_from = [s.value for s in IntentStatus if (s, move) in EXPECTED]
        assert error.details == {"status": status.value, "allowed_statuses": allowed_from}
        assert len(allowed_from) <= 2  # so "A or B" is the whole list
        assert error.message.endswith(f"Allowed only while the status is {' or '.join(allowed_from)}.")
        new = None
    else:
        assert new.status == expected
    async with runtime.database.transaction() as conn:
        after = await events_repository.timeline(conn, intent_id)
        stored = await repository.status_of(conn, intent_id)
        row_after = await repository.get(conn, sandbox.application_id, intent_id)
    assert stored == (expected or status).value
    if new is not None:  # the move answers the intent as the row now holds it, field for field
        assert new == row_after
    written = EVENTS_OF_MOVE[move] if expected is not None else ()  # a move's events, in order
    assert len(after) == before + len(written)
    assert [entry.type for entry in after[before:]] == list(written)


async def test_a_stale_read_cannot_move_the_intent(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    """Two movers read REQUIRES_ACTION; the second's compare-and-set fails with INVALID_STATE."""
    intent_id = (await create_intent(client, sandbox))["id"]
    async with runtime.database.transaction() as conn:
        row = await repository.get(conn, sandbox.application_id, intent_id)
        await service.apply_move(
            conn, runtime.clock, row, Move.START_CHECKOUT, *sample_payloads(Move.START_CHECKOUT, intent_id)
        )
    async with runtime.database.transaction() as conn:
        stale = await repository.get(conn, sandbox.application_id, intent_id)
    async with runtime.database.transaction() as conn:
        authorized = sample_payloads(Move.AUTHORIZE, intent_id)
        await service.apply_move(conn, runtime.clock, stale, Move.AUTHORIZE, *authorized)
    with pytest.raises(InvalidState) as caught:
        async with runtime.database.transaction() as conn:
            await service.apply_move(
                conn, runtime.clock, stale, Move.FAIL, *sample_payloads(Move.FAIL, intent_id)
            )
    assert caught.value.details == {
        "status": "AUTHORIZED",
        "allowed_statuses": ["REQUIRES_ACTION", "PROCESSING"],
    }
    assert caught.value.message.endswith("Allowed only while the status is REQUIRES_ACTION or PROCESSING.")


class IntentModel(RuleBasedStateMachine):
    """Random walks through the machine keep its invariants."""

    def __init__(self) -> None:
        super().__init__()
        self.status = S.CREATED
        self.history = [S.CREATED]

    @rule(move=st.sampled_from(list(Move)))
    def apply(self, move: Move) -> None:
        if allowed(self.status, move):
            self.status = next_status(self.status, move)
            self.history.append(self.status)
        else:
            with pytest.raises(InvalidState):
                next_status(self.status, move)

    @invariant()
    def refunds_only_after_authorization(self) -> None:
        if self.status in (S.PARTIALLY_REFUNDED, S.REFUNDED):
            assert S.AUTHORIZED in self.history

    @invariant()
    def authorized_at_most_once(self) -> None:
        assert self.history.count(S.AUTHORIZED) <= 1

    @invariant()
    def cancelled_only_before_any_money_taken(self) -> None:
        # A cancel (buyer's or merchant's) comes straight from CREATED or REQUIRES_ACTION; a void
        # releases a hold (REQUIRES_CAPTURE): nothing was ever taken.
        if S.CANCELLED in self.history:
            before = self.history[: self.history.index(S.CANCELLED)]
            assert before[-1] in (S.CREATED, S.REQUIRES_ACTION, S.REQUIRES_CAPTURE)
            assert S.AUTHORIZED not in before

    @invariant()
    def captured_only_from_a_hold(self) -> None:
        if S.REQUIRES_CAPTURE in self.history and S.AUTHORIZED in self.history:
            assert self.history.index(S.REQUIRES_CAPTURE) < self.history.index(S.AUTHORIZED)

    @invariant()
    def nothing_after_a_final_state(self) -> None:
        for i, status in enumerate(self.history[:-1]):
            assert status not in FINAL, self.history[i:]


TestIntentModel = IntentModel.TestCase
TestIntentModel.settings = settings(max_examples=200, stateful_step_count=20, deadline=None)


@given(st.sampled_from(list(IntentStatus)), st.sampled_from(list(Move)))
def test_next_status_agrees_with_allowed(status: IntentStatus, move: Move) -> None:
    if allowed(status, move):
        assert next_status(status, move) == EXPECTED[(status, move)]
    else:
        with pytest.raises(InvalidState):
            next_status(status, move)
