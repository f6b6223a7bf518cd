"""The dry run: the decision a checkout of these intent fields would get now, by the active
version or by any other (a draft, an earlier one), nothing written.

Health is read, not used: a provider being skipped is reported as skipped, but no trial call is
started (``ProviderHealth.skipped_until``, not ``admit``)."""

from __future__ import annotations

import dataclasses

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import isoformat
from payorch.connectors import service as connectors
from payorch.ids import new_id
from payorch.providers.health import ProviderHealth
from payorch.routing import service
from payorch.routing.decide import ActiveProgram, IntentFacts, decide
from payorch.routing.health_history import key_of
from payorch.routing.record import RoutingRecord, Skipped, SkipReason
from payorch.routing.schemas import EvaluateRouting
from payorch.routing.strategy import SuccessRates


async def evaluate(
    conn: AsyncConnection,
    health: ProviderHealth,
    rates: SuccessRates,
    caller: Caller,
    merchant_id: str,
    body: EvaluateRouting,
) -> RoutingRecord:
    """The record, ``chosen`` the provider a checkout would go to (None: every candidate is being
    skipped). 422 CONNECTOR_NOT_CONFIGURED as the checkout would answer it."""
    await service.check_merchant(conn, caller, merchant_id)
    if body.version is None:
        program = await service.active_program(conn, merchant_id)
    else:  # a draft or an earlier version, as if it were active (404 if there is none)
        found = await service.version_of(conn, caller, merchant_id, body.version)
        program = ActiveProgram(found.version, service.program_of(found))
    facts = IntentFacts(
        body.payment_intent_id or new_id("payi"), merchant_id, body.amount, body.currency, body.metadata
    )
    decision = await decide(
        facts,
        await connectors.merchant_connectors(conn, merchant_id),
        program,
        body.provider,
        rates,
    )
    skipped: list[Skipped] = []
    for connector in decision.candidates:
        until = None if decision.explicit else await health.skipped_until(key_of(connector))
        if until is None:
            return dataclasses.replace(decision.record.skipping(*skipped), chosen=connector.provider)
        skipped.append(
            Skipped(
                connector.provider,
                SkipReason.UNAVAILABLE,
                f"{connector.provider} is skipped after repeated failures (next try at {isoformat(until)})",
            )
        )
    return decision.record.skipping(*skipped)
