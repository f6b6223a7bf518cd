"""The routing record: why a checkout went where it went (docs/routing.md, "The record").

Shown as ``routing`` on the checkout response and the intent, in payment.checkout.started's data
and on the dashboard's intent page."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from payorch.jsontypes import JsonObject
from payorch.routing.strategy import Score


class Strategy(StrEnum):
    EXPLICIT = "explicit"  # the request named its provider
    PRIORITY = "priority"  # the connectors' priority (no rule matched, or no rules)
    RULE = "rule"  # a rule's priority list
    SPLIT = "split"  # a rule's volume split
    SUCCESS_RATE = "success_rate"  # the default: recent authorization rates


class SkipReason(StrEnum):
    CURRENCY = "currency"  # cannot charge the intent's currency
    CAPTURE_METHOD = "capture_method"  # cannot hold money for a manual capture
    NOT_ENABLED = "not_enabled"  # named by the rule, no longer enabled for the merchant
    UNAVAILABLE = "unavailable"  # skipped after repeated failures (health)
    DOWN = "down"  # tried: did not answer, or failed
    REFUSED = "refused"  # tried: refused the checkout
    DECLINED = "declined"  # declined this intent's payment already (a second chance goes elsewhere)


@dataclass(frozen=True, slots=True)
class Candidate:
    provider: str
    priority: int
    weight: int | None = None  # a split's share, in percent
    score: Score | None = None  # the success-rate strategy's


@dataclass(frozen=True, slots=True)
class Skipped:
    provider: str
    reason: SkipReason
    detail: str


@dataclass(frozen=True, slots=True)
class RoutingRecord:
    strategy: Strategy
    rule: str | None
    version: int | None  # the active routing version; None when the merchant never saved one
    candidates: tuple[Candidate, ...]  # in the order they are tried
    skipped: tuple[Skipped, ...] = ()
    chosen: str | None = None
    fallback: str | None = None  # "priority" when success rates could not rank

    def skipping(self, *more: Skipped) -> RoutingRecord:
        return replace(self, skipped=(*self.skipped, *more))

    def as_json(self) -> JsonObject:
        body: JsonObject = {
            "strategy": self.strategy.value,
            "rule": self.rule,
            "version": self.version,
            "candidates": [_candidate(c) for c in self.candidates],
            "skipped": [
                {"provider": s.provider, "reason": s.reason.value, "detail": s.detail} for s in self.skipped
            ],
            "chosen": self.chosen,
            "fallback": self.fallback,
        }
        return body


def _candidate(candidate: Candidate) -> JsonObject:
    score = candidate.score
    return {
        "provider": candidate.provider,
        "priority": candidate.priority,
        "weight": candidate.weight,
        "score": None if score is None else {"rate": score.rate, "attempts": score.attempts},
    }
