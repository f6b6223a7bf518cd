"""Trying a decision's candidates in order, with provider health (providers/health.py).

``auto`` skips a provider while health says it is failing and moves to the next on a failure;
an explicit provider is tried even while skipped, and alone. What happened to each candidate
goes into the routing record (``skipped``) and into the 503's message when none took it. A
failure, and a provider becoming skipped or available again, go into the health history
(health_history.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from payorch.connectors.records import Connector
from payorch.errors import ApiError, ConnectorUnavailable, ProviderError
from payorch.providers.health import ProviderHealth
from payorch.routing.decide import Decision, IntentFacts
from payorch.routing.health_history import HealthJournal, key_of
from payorch.routing.record import RoutingRecord, Skipped, SkipReason
from payorch.routing.strategy import SuccessRates


class Attempts:
    __slots__ = (
        "_facts",
        "_decision",
        "_health",
        "_rates",
        "_journal",
        "_waits",
        "_unavailable",
        "_skipped",
        "_refusal",
    )

    def __init__(
        self,
        facts: IntentFacts,
        decision: Decision,
        health: ProviderHealth,
        rates: SuccessRates,
        journal: HealthJournal,
    ) -> None:
        self._facts = facts
        self._decision = decision
        self._health = health
        self._rates = rates
        self._journal = journal
        self._waits: list[int] = []
        self._unavailable: list[str] = []  # each provider that was skipped or down, and why
        self._skipped: list[Skipped] = []
        self._refusal: str | None = None

    async def admitted(self) -> AsyncIterator[Connector]:
        """The candidates to call, in order."""
        for connector in self._decision.candidates:
            if not self._decision.explicit:  # an explicit provider is used while enabled, even when skipped
                admission = await self._health.admit(key_of(connector))
                if not admission.allowed:
                    self._waits.append(admission.retry_after_seconds)
                    self._note(
                        connector,
                        SkipReason.UNAVAILABLE,
                        f"{connector.provider} is skipped after repeated failures "
                        f"(next try in {admission.retry_after_seconds} s)",
                    )
                    continue
            yield connector

    async def down(self, connector: Connector, reason: str) -> None:
        tripped = await self._health.failed(key_of(connector))
        await self._journal.failed(connector, tripped)
        await self._rates.provider_failed(
            self._facts.merchant_account_id, self._facts.currency, connector.provider
        )
        self._waits.append(1)
        self._note(connector, SkipReason.DOWN, f"{connector.provider} is down ({reason})")

    def refused(self, connector: Connector, reason: str) -> None:
        self._refusal = reason
        self._skipped.append(Skipped(connector.provider, SkipReason.REFUSED, reason))

    async def succeeded(self, connector: Connector) -> RoutingRecord:
        """The record of the decision, ``connector`` chosen."""
        if await self._health.succeeded(key_of(connector)):
            await self._journal.available(connector)
        return self.record(connector.provider)

    def record(self, chosen: str | None) -> RoutingRecord:
        return replace(self._decision.record.skipping(*self._skipped), chosen=chosen)

    def failure(self, retry_after_seconds: int) -> ApiError:
        """The error when no candidate took the checkout (``retry_after_seconds``: when nothing
        says better)."""
        if self._refusal is not None and not self._waits:
            return ProviderError(f"The provider refused the checkout: {self._refusal}")
        return ConnectorUnavailable(min(self._waits) if self._waits else retry_after_seconds, self._message())

    def _note(self, connector: Connector, reason: SkipReason, text: str) -> None:
        self._unavailable.append(text)
        self._skipped.append(Skipped(connector.provider, reason, text))

    def _message(self) -> str | None:
        """Name the providers that could not take the checkout, so the caller knows what to change."""
        if not self._unavailable:
            return None
        names = "; ".join(self._unavailable)
        if self._decision.explicit:
            # No failover for an explicit provider: say so, and how to get one.
            return (
                f"The requested provider is unavailable: {names}. No other provider is tried when "
                'one is named; retry later, or request the checkout with "provider": "auto".'
            )
        return f"No provider of the merchant is available: {names}. Retry later."
