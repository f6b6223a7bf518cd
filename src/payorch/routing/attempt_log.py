"""The intent's attempts: every checkout it started, why its provider was chosen and how it
ended (docs/routing.md, "A second chance after a decline"). Kept in the intent's routing record
as ``attempts``; the checkout response's and the event's record are the decision alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from payorch.jsontypes import JsonObject
from payorch.routing.decide import Decision
from payorch.routing.record import Skipped, SkipReason

DECLINED = "declined"
REPLACED = "replaced"


def attempts_of(routing: Mapping[str, object] | None) -> list[JsonObject]:
    found = (routing or {}).get("attempts")
    return [dict(a) for a in found if isinstance(a, dict)] if isinstance(found, list) else []


def declined_providers(routing: Mapping[str, object] | None) -> list[str]:
    return [str(a["provider"]) for a in attempts_of(routing) if a.get("result") == DECLINED]


def offer_pending(routing: Mapping[str, object] | None) -> JsonObject | None:
    """The last attempt, if it was declined and no checkout followed it (a second chance offered)."""
    attempts = attempts_of(routing)
    return attempts[-1] if attempts and attempts[-1].get("result") == DECLINED else None


def excluding_declined(decision: Decision, routing: Mapping[str, object] | None) -> Decision:
    """``decision`` without the providers that already declined this intent (an explicit
    request keeps its provider: the caller named it)."""
    declined = declined_providers(routing)
    if decision.explicit or not declined:
        return decision
    kept = tuple(c for c in decision.candidates if c.provider not in declined)
    skipped = [
        Skipped(c.provider, SkipReason.DECLINED, f"{c.provider} already declined this payment")
        for c in decision.candidates
        if c.provider in declined
    ]
    return replace(decision, candidates=kept, record=decision.record.skipping(*skipped))


def started(
    previous: Mapping[str, object] | None, decided: JsonObject, checkout_id: str, at: str
) -> JsonObject:
    """The intent's new routing record: ``decided`` with the attempts so far and this one."""
    attempts = attempts_of(previous)
    if attempts and attempts[-1].get("result") is None:
        attempts[-1]["result"] = REPLACED
    attempts.append(
        {
            "attempt": len(attempts) + 1,
            "provider": decided.get("chosen"),
            "checkout_id": checkout_id,
            "why": why(decided),
            "started_at": at,
            "result": None,
            "code": None,
            "provider_code": None,
            "retryable": None,
        }
    )
    return {**decided, "attempts": list(attempts)}


def ended(
    routing: Mapping[str, object] | None, error: Mapping[str, object], *, retried: bool, retryable: bool
) -> JsonObject | None:
    """The record after the current attempt ended unpaid: ``retried``, declined and a second
    chance offered (else the intent's last_payment_error says the rest)."""
    if routing is None:
        return None
    record: JsonObject = dict(routing)
    attempts = attempts_of(routing)
    if attempts:
        last = attempts[-1]
        last.update(code=error.get("code"), provider_code=error.get("provider_code"), retryable=retryable)
        if retried:
            last["result"] = DECLINED
        record["attempts"] = list(attempts)
    return record


def why(decided: Mapping[str, object]) -> str:
    """The decision's reason in words: its strategy, rule and what was passed over."""
    strategy, rule, version = decided.get("strategy"), decided.get("rule"), decided.get("version")
    words = {
        "explicit": "named in the checkout request",
        "priority": "first available by the connectors' priority",
        "rule": f"first available of rule {rule!r} (routing version {version})",
        "split": f"the share of rule {rule!r}'s split (routing version {version})",
        "success_rate": "the best recent authorization rate",
    }.get(str(strategy), str(strategy))
    skipped = decided.get("skipped")
    passed: Sequence[object] = skipped if isinstance(skipped, list) else []
    over = [f"{s['provider']} {s['reason']}" for s in passed if isinstance(s, dict)]
    return f"{words}; passed over: {', '.join(over)}" if over else words
