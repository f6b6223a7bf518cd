"""Creating a payment intent: on PostgreSQL, its checks and every write in one statement.

The checks (the merchant account is the caller's, the requested provider is enabled: routing's
gate), the intent, its payment_intent.created event, that event's deliveries and the Idempotency-Key's
stored answer are one statement (payorch.db.one_statement): one round trip, no BEGIN/COMMIT,
atomic as a transaction is. Each domain gives its own table's fragment; this module only orders
them:

    subscribed -> fits, merchant_owned, provider_enabled -> checked
        -> admitted -> inserted_intent -> inserted_event -> queued_deliveries

(``checked``: a row when all three gates have one; ``admitted``: the stored key when the request
has one, else ``checked`` itself).

Each write requires the previous one's row, so when the first writes nothing, nothing is written.
It writes nothing when a check fails, when the key is already stored (a retry, a concurrent
request with the same key, which PostgreSQL makes wait for the first, an expired key not yet
purged) or when more endpoints subscribe than the statement carries delivery ids for. Then the
full path runs, as SQLite's always does: ``Idempotency.run`` around ``service.create_intent`` in
one transaction, which answers the failed check's error, replays the stored answer, refuses a
different body or takes the key over.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import service as applications
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.db import Phases
from payorch.db.one_statement import Fragment, OneStatement
from payorch.db.statements import StatementConnection
from payorch.events import service as events
from payorch.idempotency.records import IdempotentResult
from payorch.idempotency.service import STORED_ANSWER_FRAGMENT, Idempotency, Scope
from payorch.intents import repository, service
from payorch.intents.schemas import CreatePaymentIntent, intent_body
from payorch.jsontypes import dumps
from payorch.routing import gate
from payorch.webhooks import fanout

CREATED = 201


def _statement(admitted: Fragment) -> OneStatement:
    """``admitted``: the gate of the intent's write (the stored key, or the fit alone)."""
    return OneStatement(
        [
            fanout.SUBSCRIBED_FRAGMENT,
            fanout.FITS_FRAGMENT,
            applications.MERCHANT_OWNED_FRAGMENT,
            gate.PROVIDER_ENABLED_FRAGMENT,
            Fragment("checked", "SELECT 1 FROM fits, merchant_owned, provider_enabled"),
            admitted,
            repository.INTENT_FRAGMENT,
            events.INTENT_EVENT_FRAGMENT,
            fanout.DELIVERIES_FRAGMENT,
            fanout.NOTICE_FRAGMENT,
        ],
        "SELECT (SELECT count(*) FROM inserted_intent) AS written,"
        " (SELECT count(*) FROM notice) AS notified",
    )


# Compiled once per process. Without a key, the checks are the gate.
_WITHOUT_KEY = _statement(Fragment("admitted", "SELECT 1 FROM checked"))
_WITH_KEY = _statement(STORED_ANSWER_FRAGMENT)


async def create_intent(
    phases: Phases,
    clock: Clock,
    idempotency: Idempotency,
    caller: Caller,
    request: CreatePaymentIntent,
    scope: Scope | None,
) -> IdempotentResult:
    """POST /v1/payment-intents: the one statement, or the full path when it wrote nothing."""
    # A provider that cannot charge the currency or hold: the full path answers why, after its
    # other checks.
    if (
        not phases.is_sqlite
        and gate.currency_ok(request.provider, request.currency)
        and gate.holds_ok(request.provider, request.capture_method)
    ):
        async with phases.one_statement() as conn:
            answer = await _at_once(conn, clock, idempotency, caller, request, scope)
        if answer is not None:
            return answer

    async def operation(conn: AsyncConnection) -> tuple[int, object]:
        return CREATED, intent_body(await service.create_intent(conn, clock, caller, request))

    return await idempotency.run(scope, operation)


async def _at_once(
    conn: StatementConnection,
    clock: Clock,
    idempotency: Idempotency,
    caller: Caller,
    request: CreatePaymentIntent,
    scope: Scope | None,
) -> IdempotentResult | None:
    """The one statement; None if it wrote nothing."""
    intent, event = service.new_intent(clock, caller, request)
    raw = dumps(intent_body(service.created_detail(intent, event)))
    parameters: dict[str, object] = {
        "application_id": caller.application_id,
        **repository.intent_parameters(intent),
        **events.fragment_parameters(event),
        **fanout.fan_out_parameters(event),
    }
    statement = _WITHOUT_KEY
    if scope is not None:
        statement = _WITH_KEY
        parameters |= idempotency.stored_answer_parameters(scope, CREATED, raw)
    written = await statement.run(conn, parameters)
    return IdempotentResult(CREATED, raw) if written["written"] == 1 else None
