"""Statements on the driver (payorch.db.prepared): in a step without a transaction a prepared
statement runs on asyncpg itself, and answers exactly what the engine answers in a transaction.
Each repository read that is prepared is compared field for field, after a whole payment (so the
intent has a checkout, a payment and a timeline). On SQLite both ways are the engine's."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
from datetime import UTC, datetime, timedelta, timezone

import asyncpg
import httpx
import pytest
from sqlalchemy import bindparam, event, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

import payorch
from payorch.checkouts import repository as checkouts
from payorch.connectors import repository as connectors
from payorch.db.prepared import Prepared, statements_in_engine_transaction
from payorch.db.statements import ASYNCPG_DIALECT
from payorch.db.tables import payment_intents
from payorch.errors import DatabaseUnavailable
from payorch.events import repository as events
from payorch.intents import repository as intents
from payorch.runtime import Runtime
from payorch.simulator import repository as simulator
from payorch.simulator.provider_a import repository as simulator_a
from payorch.simulator.provider_b import repository as simulator_b
from tests.backends import terminate_backends
from tests.kit import create_intent, mock_sandbox
from tests.providers.helpers import A, B, pay, query_of, start


def every_prepared() -> list[Prepared]:
    found = []
    for module in pkgutil.walk_packages(payorch.__path__, "payorch."):
        if module.name.startswith("payorch.db.migrations") or module.name.endswith("__main__"):
            continue
        loaded = importlib.import_module(module.name)
        found += [value for value in vars(loaded).values() if isinstance(value, Prepared)]
    return found


def test_every_prepared_statement_compiles_for_the_driver() -> None:
    prepared = every_prepared()
    assert len(prepared) >= 10
    for statement in prepared:
        sql, _ = statement._arguments({name: None for name in _names(statement)})
        assert "$1" in sql


def _names(statement: Prepared) -> tuple[str, ...]:
    return tuple(statement.statement.compile(dialect=ASYNCPG_DIALECT).positiontup or ())


async def test_the_driver_answers_what_the_engine_answers(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    paid, body = await start(client, sandbox, provider=A)
    await pay(client, body, "approve")
    open_intent, _ = await start(client, sandbox, provider=A)
    app = sandbox.application_id
    async with runtime.database.transaction() as conn:
        connector_id = (await connectors.for_merchant(conn, sandbox.merchant_account_id))[0].id
        open_checkout = await checkouts.active_for_intent(conn, open_intent["id"])
    assert open_checkout is not None

    async def reads(conn: AsyncConnection) -> list[object]:
        answers: list[object] = []
        for intent_id in (paid["id"], open_intent["id"], "payi_unknown"):
            answers.append(await intents.get(conn, app, intent_id))
            answers.append(await intents.get_any(conn, intent_id))
            answers.append(await intents.get_with_payment(conn, app, intent_id))
            answers.append(await events.timeline(conn, intent_id))
            answers.append(await checkouts.active_for_intent(conn, intent_id))
        answers.append(await checkouts.get(conn, open_checkout.id))
        answers.append(await connectors.for_merchant(conn, sandbox.merchant_account_id))
        answers.append(await connectors.get_any(conn, connector_id))
        return answers

    through_engine: list[str] = []

    def seen(*args: object) -> None:
        through_engine.append(str(args[2]))

    engine = runtime.database.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        async with runtime.database.reading() as conn:
            on_driver = await reads(conn)
        driver_statements = len(through_engine)
        async with runtime.database.engine.begin() as conn:  # the engine's own transaction
            on_engine = await reads(conn)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert on_driver == on_engine
    if not runtime.database.is_sqlite:
        assert driver_statements == 0, through_engine  # every read above went to the driver
    assert on_driver[2] is not None and on_driver[2][1] is not None  # the paid intent's payment
    assert on_driver[4] is None and on_driver[9] is not None  # closed and open checkouts


async def test_the_simulator_reads_the_same_on_the_driver(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    _, a_body = await start(client, sandbox, provider=A)
    _, b_body = await start(client, sandbox, provider=B)
    await pay(client, b_body, "approve")
    token = a_body["checkout"]["fields"]["token_ws"]
    preference_id = query_of(b_body["checkout"]["url"])["pref_id"]
    owner = sandbox.application_id

    async def reads(conn: AsyncConnection) -> list[object]:
        return [
            await simulator.fault_mode(conn, owner, "provider_b"),
            await simulator.merchant_name(conn, owner),
            await simulator_a.get(conn, token),
            await simulator_a.get(conn, token, owner=owner),
            await simulator_a.get(conn, token, owner="someone-else"),
            await simulator_b.get_preference(conn, preference_id),
            await simulator_b.payments_of_preference(conn, preference_id),
        ]

    async with runtime.database.reading() as conn:
        on_driver = await reads(conn)
    async with runtime.database.engine.begin() as conn:  # the engine's own transaction
        on_engine = await reads(conn)
    assert on_driver == on_engine
    assert on_driver[2] is not None and on_driver[4] is None and on_driver[6] != []


@pytest.mark.parametrize("step", ["reading", "transaction", "engine"])
async def test_the_lease_counts_the_rows_it_changed(
    client: httpx.AsyncClient, runtime: Runtime, step: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    created, _ = await start(client, sandbox, provider=A)
    async with runtime.database.transaction() as conn:
        checkout = await checkouts.active_for_intent(conn, created["id"])
    assert checkout is not None
    now = runtime.clock.now()
    until = now + timedelta(seconds=30)
    opened = {
        "reading": runtime.database.reading,
        "transaction": runtime.database.transaction,
        "engine": runtime.database.engine.begin,
    }[step]()
    async with opened as conn:
        assert await checkouts.take_lease(conn, checkout.id, now, until) is True
        assert await checkouts.take_lease(conn, checkout.id, now, until) is False  # held
        assert await checkouts.take_lease(conn, "chk_unknown", now, until) is False
    async with runtime.database.reading() as conn:
        leased = await checkouts.get(conn, checkout.id)
    assert leased is not None and leased.lease_until == until


async def test_a_connection_that_broke_on_the_driver_is_not_used_again(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    if runtime.database.is_sqlite:
        pytest.skip("the driver path is PostgreSQL's")
    sandbox = await mock_sandbox(runtime)
    created, _ = await start(client, sandbox, provider=A)
    admin = await asyncpg.connect(runtime.settings.database_url.replace("+asyncpg", ""))
    pid = None
    try:
        with pytest.raises(DatabaseUnavailable):  # 503 at the edge (tests/http/test_database_loss.py)
            async with runtime.database.reading() as conn:
                pid = await conn.scalar(text("SELECT pg_backend_pid()"))
                await terminate_backends(admin, [pid])  # as after a restart or a failover
                await intents.get_any(conn, created["id"])
    finally:
        await admin.close()
    async with runtime.database.reading() as conn:  # the pool did not hand the dead one out again
        assert await conn.scalar(text("SELECT pg_backend_pid()")) != pid
        assert await intents.get_any(conn, created["id"]) is not None


class _Stop(Exception):
    pass


@pytest.mark.parametrize("ends", ["commit", "raise"])
async def test_a_transaction_holds_the_driver_and_the_engine_statements_together(
    client: httpx.AsyncClient, runtime: Runtime, ends: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    created, _ = await start(client, sandbox, provider=A)
    intent_id = created["id"]
    now = runtime.clock.now()
    try:
        async with runtime.database.transaction() as conn:
            moved = await intents.compare_and_set_status(  # prepared: on the driver (PostgreSQL)
                conn, intent_id, expected="REQUIRES_ACTION", new="PROCESSING", at=now
            )
            assert moved
            await conn.execute(  # built here: through the engine, in the same transaction
                update(payment_intents).where(payment_intents.c.id == intent_id).values(description="changed")
            )
            if ends == "raise":
                raise _Stop
    except _Stop:
        pass
    async with runtime.database.reading() as conn:
        after = await intents.get_any(conn, intent_id)
    assert after is not None
    if ends == "commit":
        assert (after.status, after.description) == ("PROCESSING", "changed")
    else:
        assert (after.status, after.description) == ("REQUIRES_ACTION", created["description"])


async def test_a_cancelled_transaction_leaves_no_transaction_open_in_the_pool(runtime: Runtime) -> None:
    if runtime.database.is_sqlite:
        pytest.skip("the driver's transaction is PostgreSQL's")
    entered = asyncio.Event()

    async def hold() -> None:
        async with runtime.database.transaction() as conn:
            await conn.execute(text("SELECT 1"))
            entered.set()
            await asyncio.sleep(10)

    task = asyncio.create_task(hold())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(3):  # whichever pooled connection comes next is outside any transaction
        async with runtime.database.reading() as conn:  # autocommit: a transaction per statement
            first = await conn.scalar(text("SELECT txid_current()"))
            assert await conn.scalar(text("SELECT txid_current()")) != first


def test_a_parameter_left_out_is_an_error_not_a_null() -> None:
    statement = Prepared(
        update(payment_intents)
        .where(payment_intents.c.id == bindparam("intent_id"))
        .values(description=bindparam("text"), provider=None)
    )
    with pytest.raises(KeyError, match="text"):
        statement._arguments({"intent_id": "payi_x"})
    sql, arguments = statement._arguments({"intent_id": "payi_x", "text": "t"})
    assert len(arguments) == 3 and None in arguments  # the statement's own NULL goes with it


@pytest.mark.parametrize("step", ["transaction", "engine"])
async def test_a_write_with_json_stores_what_the_engine_stores(
    client: httpx.AsyncClient, runtime: Runtime, step: str
) -> None:
    """The intent's move with its routing record (a JSON column) and its time: on the driver in
    a transaction (PostgreSQL), each value through its column type as the engine sends it."""
    sandbox = await mock_sandbox(runtime)
    created = await create_intent(client, sandbox)
    routing = {"reason": "requested", "candidates": ["provider_a_redirect_post"], "note": None, "n": 1}
    at = datetime(2026, 12, 5, 9, 30, tzinfo=timezone(timedelta(hours=-3)))  # not UTC: put in UTC
    opened = {"transaction": runtime.database.transaction, "engine": runtime.database.engine.begin}[step]()
    async with opened as conn:
        moved = await intents.compare_and_set_status(
            conn, created["id"], expected="CREATED", new="REQUIRES_ACTION", at=at, provider=A, routing=routing
        )
    assert moved
    async with runtime.database.reading() as conn:
        after = await intents.get_any(conn, created["id"])
    assert after is not None
    assert (after.status, after.provider, after.routing) == ("REQUIRES_ACTION", A, routing)
    assert after.updated_at == at and after.updated_at.tzinfo == UTC


def test_a_naive_datetime_is_refused_before_it_reaches_the_driver() -> None:
    statement = Prepared(
        update(payment_intents)
        .where(payment_intents.c.id == bindparam("intent_id"))
        .values(updated_at=bindparam("at", type_=payment_intents.c.updated_at.type))
    )
    with pytest.raises(ValueError, match="naive"):
        statement._arguments({"intent_id": "payi_x", "at": datetime(2026, 12, 5, 9, 30)})  # noqa: DTZ001


async def test_in_the_engine_transaction_a_prepared_statement_joins_it_and_its_rollback(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The request's own ``Conn`` (the engine's transaction): a prepared statement goes to the
    driver only once the engine has begun its transaction there, and the engine's rollback
    undoes what the driver wrote too."""
    sandbox = await mock_sandbox(runtime)
    created = await create_intent(client, sandbox)
    through_engine: list[str] = []

    def seen(*args: object) -> None:
        through_engine.append(str(args[2]))

    engine = runtime.database.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    now = runtime.clock.now()
    try:
        async with runtime.database.engine.connect() as conn:
            with statements_in_engine_transaction(conn):
                assert await intents.get_any(conn, created["id"]) is not None  # begins the transaction
                engine_first = len(through_engine)
                moved = await intents.compare_and_set_status(
                    conn,
                    created["id"],
                    expected="CREATED",
                    new="REQUIRES_ACTION",
                    at=now,
                    provider=A,
                    routing={},
                )
                assert moved
                after_move = len(through_engine)
                await conn.rollback()
                after = await intents.get_any(conn, created["id"])  # begins a new one: the engine's
                after_rollback = len(through_engine)
                await conn.rollback()
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert after is not None and after.status == "CREATED"  # the driver's write was undone
    if not runtime.database.is_sqlite:  # (SQLite's BEGIN IMMEDIATE is a statement of the engine's)
        assert (engine_first, after_move, after_rollback) == (1, 1, 2)  # the move: on the driver
