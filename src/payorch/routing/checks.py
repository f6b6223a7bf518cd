"""The checks a routing program passes before it is saved (docs/routing.md, "Checks").

Each problem names its rule (index and name), the field and the reason; the API answers them
all at once as 400 VALIDATION_ERROR. The dashboard's form shows ``problems`` beside each rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from payorch.connectors.records import Connector
from payorch.errors import ValidationFailed
from payorch.intents.schemas import MAX_METADATA_KEY_LENGTH
from payorch.providers.registry import PROVIDER_IDS
from payorch.routing.currencies import charges, currencies_of
from payorch.routing.program import Conditions, PriorityOutcome, RoutingProgram, Rule, SplitOutcome


@dataclass(frozen=True, slots=True)
class RuleProblem:
    index: int
    name: str
    field: str  # from the rule: "if.amount", "then.split[1].weight"
    reason: str

    @property
    def message(self) -> str:
        return f'rule {self.index} "{self.name}": {self.reason}'


def problems(program: RoutingProgram, connectors: Sequence[Connector]) -> list[RuleProblem]:
    """Every problem of ``program`` for a merchant with these connectors, rule by rule."""
    enabled = {c.provider for c in connectors if c.enabled}
    # A rule without a currency condition admits whatever the merchant can take.
    takeable = sorted({cur for p in enabled for cur in currencies_of(p)})
    found: list[RuleProblem] = []
    for index, rule in enumerate(program.rules):
        reasons = [
            *_name_reasons(program.rules, index),
            *_reachability_reasons(program.rules, index),
            *_condition_reasons(rule.if_),
            *_outcome_reasons(rule, enabled, takeable),
        ]
        found += [RuleProblem(index, rule.name, field, reason) for field, reason in reasons]
    return found


def check(program: RoutingProgram, connectors: Sequence[Connector]) -> None:
    """Raise 400 VALIDATION_ERROR listing the program's problems, if it has any."""
    found = problems(program, connectors)
    if not found:
        return
    error = ValidationFailed.listing([(f"rules[{p.index}].{p.field}", p.message) for p in found])
    listed: list[dict[str, object]] = error.details["errors"]
    for entry, problem in zip(listed, found, strict=False):  # the first MAX_LISTED
        entry["rule_index"] = problem.index
        entry["rule_name"] = problem.name
    raise error


Reasons = list[tuple[str, str]]


def _name_reasons(rules: Sequence[Rule], index: int) -> Reasons:
    earlier = next((i for i in range(index) if rules[i].name == rules[index].name), None)
    if earlier is None:
        return []
    return [("name", f"the name is already used by rule {earlier}")]


def _reachability_reasons(rules: Sequence[Rule], index: int) -> Reasons:
    for i in range(index):
        if covers(rules[i].if_, rules[index].if_):
            return [
                (
                    "if",
                    f'no intent can reach it: rule {i} "{rules[i].name}" comes first and matches '
                    "every intent this one matches",
                )
            ]
    return []


def covers(wide: Conditions, narrow: Conditions) -> bool:
    """Whether every intent matching ``narrow`` matches ``wide``."""
    if wide.currency is not None and (
        narrow.currency is None or not set(narrow.currency) <= set(wide.currency)
    ):
        return False
    low, high = _bounds(wide)
    narrow_low, narrow_high = _bounds(narrow)
    if narrow_low < low or narrow_high > high:
        return False
    wanted = wide.metadata or {}
    given = narrow.metadata or {}
    return all(given.get(key) == value for key, value in wanted.items())


def _bounds(conditions: Conditions) -> tuple[int, float]:
    amount = conditions.amount
    low = amount.gte if amount is not None and amount.gte is not None else 0
    high: float = amount.lt if amount is not None and amount.lt is not None else float("inf")
    return low, high


def _condition_reasons(conditions: Conditions) -> Reasons:
    reasons: Reasons = []
    if conditions.currency is not None and not conditions.currency:
        reasons.append(("if.currency", "an empty currency list matches no intent"))
    listed = conditions.currency or []
    for code in sorted({c for c in listed if listed.count(c) > 1}):
        reasons.append(("if.currency", f"{code} is listed twice: list each currency once"))
    for position, key in enumerate(conditions.metadata or {}):
        # Checked here, not in the model: a stored version parses as it was saved.
        if not 1 <= len(key) <= MAX_METADATA_KEY_LENGTH:
            reasons.append(
                (
                    "if.metadata",
                    f"metadata key {position + 1} is {len(key)} characters and an intent's metadata "
                    f"keys are 1 to {MAX_METADATA_KEY_LENGTH}: no intent can match it",
                )
            )
    low, high = _bounds(conditions)
    if low >= high:
        reasons.append(
            ("if.amount", f"amount.gte {low} is not below amount.lt {int(high)}: no amount matches")
        )
    return reasons


def _outcome_reasons(rule: Rule, enabled: set[str], takeable: list[str]) -> Reasons:
    outcome = rule.then
    currencies = rule.if_.currency if rule.if_.currency is not None else takeable
    reasons: Reasons = []
    if isinstance(outcome, PriorityOutcome):
        named = [(f"then.priority[{i}]", p) for i, p in enumerate(outcome.priority)]
    else:
        named = [(f"then.split[{i}].provider", s.provider) for i, s in enumerate(outcome.split)]
        reasons += _split_reasons(outcome)
    seen: set[str] = set()
    for field, provider in named:
        if provider in seen:
            reasons.append((field, f"{provider} is named twice"))
            continue
        seen.add(provider)
        reasons += [(field, reason) for reason in _provider_reasons(provider, enabled, currencies)]
    return reasons


def _provider_reasons(provider: str, enabled: set[str], currencies: Sequence[str]) -> list[str]:
    if provider not in PROVIDER_IDS:
        return [f"{provider} is not a provider; one of {', '.join(PROVIDER_IDS)}"]
    if provider not in enabled:
        return [f"{provider} is not enabled for this merchant"]
    refused = [c for c in currencies if not charges(provider, c)]
    if refused:
        return [f"{provider} cannot charge {', '.join(refused)}, which this rule admits"]
    return []


def _split_reasons(outcome: SplitOutcome) -> Reasons:
    reasons: Reasons = []
    for i, share in enumerate(outcome.split):
        if isinstance(share.weight, float) and not share.weight.is_integer():
            reasons.append((f"then.split[{i}].weight", f"weight {share.weight} is not a whole percentage"))
        elif not 1 <= share.weight <= 100:
            reasons.append((f"then.split[{i}].weight", f"weight {share.weight} is not 1 to 100"))
    total = sum(share.weight for share in outcome.split)
    if total != 100:
        reasons.append(("then.split", f"the weights add up to {total:g}, not 100"))
    return reasons
