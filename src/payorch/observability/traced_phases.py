"""A span per database phase: the Phases the composition root builds while tracing is on.

Each phase of a flow (``transaction``, ``reading``, ``each_statement``, ``one_statement``) is a
span "db <phase>" under the span that opened it. The statements themselves are not spans: the
hottest bypass SQLAlchemy (the statement lane, prepared statements on the driver; see
docs/architecture.md), so a span per statement would show only part of them.

A phase opened outside a recorded trace (a worker job's poll, a request not sampled) makes no
span: the worker polls several times a second and would otherwise fill the collector with
traces of one empty claim each.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypeVar

from opentelemetry import trace
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db import Database, Phases
from payorch.db.statements import StatementConnection
from payorch.observability import tracing

C = TypeVar("C")


class TracedPhases(Phases):
    def __init__(self, database: Database) -> None:
        super().__init__(database)
        self._system = database.dialect

    def transaction(self) -> AbstractAsyncContextManager[AsyncConnection]:
        return self._phase("transaction", super().transaction())

    def reading(self) -> AbstractAsyncContextManager[AsyncConnection]:
        return self._phase("reading", super().reading())

    def one_statement(self) -> AbstractAsyncContextManager[StatementConnection]:
        return self._phase("one_statement", super().one_statement())

    def each_statement(self) -> AbstractAsyncContextManager[AsyncConnection]:
        return self._phase("each_statement", super().each_statement())

    @asynccontextmanager
    async def _phase(self, name: str, phase: AbstractAsyncContextManager[C]) -> AsyncIterator[C]:
        if not trace.get_current_span().is_recording():
            async with phase as conn:
                yield conn
            return
        with tracing.tracer.start_as_current_span(
            f"db {name}",
            attributes={"db.system": self._system, "payorch.db.phase": name},
            record_exception=False,  # a driver's error text can quote the statement's values
            set_status_on_exception=False,
        ) as span:
            try:
                async with phase as conn:
                    yield conn
            except BaseException as exc:
                tracing.failed(span, type(exc).__name__)
                raise
