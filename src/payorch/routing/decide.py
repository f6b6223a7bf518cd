"""The decision: which of a merchant's connectors a checkout tries, in which order, and why.

- An explicit provider: its connector while enabled and able to charge the currency (health does
  not matter: attempts.py tries it even when skipped), as the first round decided.
- ``auto``: the enabled connectors that can charge the currency, by priority (the one place that
  orders them). Then the active routing version, if any: the first rule whose conditions all hold
  decides (a priority list, or a split), else its default (priority, or success rate).
- A split picks by a hash of the intent's id, so a retried checkout picks the same provider; the
  split's other providers follow by weight, for failover.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from payorch.connectors.records import Connector
from payorch.errors import CaptureMethodNotSupported, ConnectorNotConfigured, CurrencyNotSupported
from payorch.providers import AUTO
from payorch.routing.currencies import MANUAL, charges, check_capture_method, currencies_of, declared
from payorch.routing.order import by_priority
from payorch.routing.program import Conditions, PriorityOutcome, RoutingProgram, Rule, SplitOutcome
from payorch.routing.record import Candidate, RoutingRecord, Skipped, SkipReason, Strategy
from payorch.routing.strategy import Score, SuccessRates


@dataclass(frozen=True, slots=True)
class IntentFacts:
    """What routing reads of an intent (or of an evaluate request)."""

    id: str
    merchant_account_id: str
    amount: int
    currency: str
    metadata: Mapping[str, str]
    capture_method: str = "automatic"  # manual: only providers that can hold


# The capture methods a connector takes (connectors.service.capture_methods_of, which reads a
# connector's own setting; ``declared``: what its provider declares).
CaptureMethodsOf = Callable[[Connector], frozenset[str]]


@dataclass(frozen=True, slots=True)
class ActiveProgram:
    version: int
    program: RoutingProgram


@dataclass(frozen=True, slots=True)
class Decision:
    candidates: tuple[Connector, ...]  # tried in this order
    explicit: bool  # no health skipping, no failover message for auto
    record: RoutingRecord  # ``chosen`` is set once one is tried successfully


async def decide(
    facts: IntentFacts,
    connectors: Sequence[Connector],
    active: ActiveProgram | None,
    requested: str,
    rates: SuccessRates,
    methods_of: CaptureMethodsOf = declared,
) -> Decision:
    """Raises ConnectorNotConfigured when no connector can take the intent."""
    version = active.version if active is not None else None
    enabled = by_priority([c for c in connectors if c.enabled])
    if requested != AUTO:
        check_capture_method(requested, facts.capture_method)
        return Decision(
            (_explicit(enabled, requested, facts, methods_of),),
            True,
            _record(
                Strategy.EXPLICIT, None, version, [_candidate(c) for c in enabled if c.provider == requested]
            ),
        )
    usable = [c for c in enabled if _able(c, facts, methods_of)]
    skipped = [_unable(c, facts, methods_of) for c in enabled if c not in usable]
    if not usable:
        if any(charges(c.provider, facts.currency) for c in enabled):
            how = "hold a payment" if facts.capture_method == MANUAL else "capture a payment at once"
            raise ConnectorNotConfigured(
                f"No enabled provider of this merchant can {how} in {facts.currency} "
                f"(capture_method {facts.capture_method})."
            )
        if enabled:
            raise ConnectorNotConfigured(f"No enabled provider of this merchant supports {facts.currency}.")
        raise ConnectorNotConfigured("The merchant has no enabled provider.")
    if active is not None:
        rule = next((r for r in active.program.rules if matches(r.if_, facts)), None)
        if rule is not None:
            decided = _by_rule(rule, facts, usable, enabled, active.version, methods_of)
            if decided.candidates:
                return _skipping(decided, skipped)
            # Every provider the rule names was disabled since it was saved: the default decides.
            skipped += decided.record.skipped
        if active.program.default == "success_rate":
            ranked = await _by_success_rate(facts, usable, active.version, rates)
            return _skipping(ranked, skipped)
    record = _record(Strategy.PRIORITY, None, version, [_candidate(c) for c in usable])
    return Decision(tuple(usable), False, record.skipping(*skipped))


def matches(conditions: Conditions, facts: IntentFacts) -> bool:
    if conditions.currency is not None and facts.currency not in conditions.currency:
        return False
    amount = conditions.amount
    if amount is not None:
        if amount.gte is not None and facts.amount < amount.gte:
            return False
        if amount.lt is not None and facts.amount >= amount.lt:
            return False
    wanted = conditions.metadata or {}
    return all(facts.metadata.get(key) == value for key, value in wanted.items())


def split_bucket(intent_id: str, total: int) -> int:
    """Where ``intent_id`` falls in [0, total): the same for every retry of its checkout."""
    digest = hashlib.sha256(intent_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % total


def _explicit(
    enabled: Sequence[Connector], requested: str, facts: IntentFacts, methods_of: CaptureMethodsOf
) -> Connector:
    chosen = next((c for c in enabled if c.provider == requested), None)
    if chosen is None:
        raise ConnectorNotConfigured(f"The provider {requested} is not enabled for this merchant.")
    if not charges(requested, facts.currency):
        raise CurrencyNotSupported(requested, facts.currency, sorted(currencies_of(requested)))
    if facts.capture_method not in methods_of(chosen):
        method = facts.capture_method
        raise CaptureMethodNotSupported(
            requested, [], capture_method=method, connector=_connector_cannot(method)
        )
    return chosen


def _by_rule(
    rule: Rule,
    facts: IntentFacts,
    usable: list[Connector],
    enabled: list[Connector],
    version: int,
    methods_of: CaptureMethodsOf,
) -> Decision:
    outcome = rule.then
    names = outcome.priority if isinstance(outcome, PriorityOutcome) else [s.provider for s in outcome.split]
    by_provider = {c.provider: c for c in usable}
    skipped = [_unusable(p, enabled, facts, methods_of) for p in names if p not in by_provider]
    if isinstance(outcome, PriorityOutcome):
        chosen = [by_provider[p] for p in names if p in by_provider]
        record = _record(Strategy.RULE, rule.name, version, [_candidate(c) for c in chosen])
        return Decision(tuple(chosen), False, record.skipping(*skipped))
    return _split(rule.name, outcome, facts, by_provider, version, skipped)


def _split(
    name: str,
    outcome: SplitOutcome,
    facts: IntentFacts,
    by_provider: Mapping[str, Connector],
    version: int,
    skipped: list[Skipped],
) -> Decision:
    shares = [(by_provider[s.provider], int(s.weight)) for s in outcome.split if s.provider in by_provider]
    if not shares:
        return Decision((), False, _record(Strategy.SPLIT, name, version, []).skipping(*skipped))
    bucket = split_bucket(facts.id, sum(weight for _, weight in shares))
    picked = 0
    for index, (_, weight) in enumerate(shares):
        if bucket < weight:
            picked = index
            break
        bucket -= weight
    rest = sorted((s for i, s in enumerate(shares) if i != picked), key=lambda s: -s[1])  # stable
    ordered = [shares[picked], *rest]
    candidates = [_candidate(c, weight=weight) for c, weight in ordered]
    record = _record(Strategy.SPLIT, name, version, candidates)
    return Decision(tuple(c for c, _ in ordered), False, record.skipping(*skipped))


async def _by_success_rate(
    facts: IntentFacts, usable: list[Connector], version: int, rates: SuccessRates
) -> Decision:
    ranking = await rates.rank(
        facts.merchant_account_id, facts.currency, [c.provider for c in usable], facts.id
    )
    by_provider = {c.provider: c for c in usable}
    ordered = [by_provider[p] for p in ranking.providers if p in by_provider]
    ordered += [c for c in usable if c not in ordered]  # a ranking leaving one out: last
    candidates = [_candidate(c, score=ranking.scores.get(c.provider)) for c in ordered]
    record = _record(Strategy.SUCCESS_RATE, None, version, candidates)
    if ranking.fallback:
        record = RoutingRecord(record.strategy, None, version, record.candidates, fallback="priority")
    return Decision(tuple(ordered), False, record)


def _able(connector: Connector, facts: IntentFacts, methods_of: CaptureMethodsOf) -> bool:
    return charges(connector.provider, facts.currency) and facts.capture_method in methods_of(connector)


def _connector_cannot(capture_method: str) -> str:
    """Why a connector of a provider that can hold does not take ``capture_method``."""
    if capture_method == MANUAL:
        return "this merchant's connector captures every approved payment at once (its configuration)"
    return "this merchant's connector holds every approved payment for a later capture (its configuration)"


def _unable(connector: Connector, facts: IntentFacts, methods_of: CaptureMethodsOf) -> Skipped:
    """Why an enabled connector cannot take the intent."""
    provider = connector.provider
    if not charges(provider, facts.currency):
        return Skipped(provider, SkipReason.CURRENCY, f"cannot charge {facts.currency}")
    if facts.capture_method not in declared(connector):
        return Skipped(provider, SkipReason.CAPTURE_METHOD, "cannot hold a payment for a manual capture")
    return Skipped(provider, SkipReason.CAPTURE_METHOD, _connector_cannot(facts.capture_method))


def _unusable(
    provider: str, enabled: Sequence[Connector], facts: IntentFacts, methods_of: CaptureMethodsOf
) -> Skipped:
    connector = next((c for c in enabled if c.provider == provider), None)
    if connector is not None:
        return _unable(connector, facts, methods_of)
    return Skipped(provider, SkipReason.NOT_ENABLED, "named by the rule, not enabled for the merchant")


def _skipping(decision: Decision, skipped: list[Skipped]) -> Decision:
    if not skipped:
        return decision
    record = decision.record
    earlier = tuple(s for s in skipped if s not in record.skipped)
    return Decision(decision.candidates, decision.explicit, record.skipping(*earlier))


def _candidate(connector: Connector, *, weight: int | None = None, score: Score | None = None) -> Candidate:
    return Candidate(connector.provider, connector.priority, weight, score)


def _record(
    strategy: Strategy, rule: str | None, version: int | None, candidates: list[Candidate]
) -> RoutingRecord:
    return RoutingRecord(strategy, rule, version, tuple(candidates))
