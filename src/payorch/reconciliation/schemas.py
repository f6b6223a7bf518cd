"""The reports API's bodies (docs/api.md, "Reconciliation reports")."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict

from payorch.clock import isoformat
from payorch.errors import InvalidState, ValidationFailed
from payorch.jsontypes import JsonObject
from payorch.reconciliation.records import Finding, FindingKind, FindingStatus, Run, RunStatus

DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# format "date" beside the pattern: the document says the text names a real day (2026-02-30 does
# not), so what it admits the API accepts.
DATE_SCHEMA: JsonDict = {"format": "date"}
DateText = Field(
    pattern=DATE_PATTERN,
    json_schema_extra=DATE_SCHEMA,
    description="A day in UTC, YYYY-MM-DD; a day after today is 409 INVALID_STATE (not over yet).",
)


class ReconciliationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date: str = DateText


class ReconciliationRun(BaseModel):
    id: str
    date: str
    status: RunStatus = Field(description="QUEUED, RUNNING, DONE or FAILED")
    requested_at: str
    started_at: str | None
    finished_at: str | None
    error: str | None


class MatchedAmount(BaseModel):
    currency: str
    amount: int


class Matched(BaseModel):
    count: int
    amounts: list[MatchedAmount]


class ProviderReport(BaseModel):
    provider: str
    matched: Matched
    findings: int
    unavailable: str | None = Field(description="Why the provider's side could not be read")
    reconciled: bool = Field(
        description="false: payorch has no reconciliation reader for this provider, so nothing of "
        "its day was compared (not reconciled; `unavailable` says so)"
    )


class FindingBody(BaseModel):
    id: str
    provider: str
    kind: FindingKind = Field(
        description="approved_not_recorded, not_paid_at_provider, amount_mismatch, "
        "refunded_outside, dispute_not_recorded or dispute_mismatch"
    )
    action: str = Field(description="APPLIED (the provider's word, applied) or FLAGGED (for a person)")
    status: FindingStatus = Field(description="OPEN or RESOLVED")
    provider_reference: str
    payment_intent_id: str | None
    payment_intent_url: str | None
    payorch: JsonObject
    at_provider: JsonObject
    note: str | None
    resolved_at: str | None
    created_at: str


class ResolveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    note: str = Field(min_length=1, max_length=1000, description="What the person did about it")


class ReconciliationReport(BaseModel):
    run: ReconciliationRun
    providers: list[ProviderReport]
    findings: list[FindingBody]


def day_of(text: str) -> date:
    """A YYYY-MM-DD that names a real day."""
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ValidationFailed.field("date", "must be a day written YYYY-MM-DD") from None
    if len(text) != 10:
        raise ValidationFailed.field("date", "must be a day written YYYY-MM-DD")
    return day


def ended(day: date, today: date) -> date:
    """``day`` if it is not after ``today`` (UTC): a day still to come has nothing to compare."""
    if day > today:
        raise InvalidState(
            "NOT_OVER",
            f"{day.isoformat()} has not begun yet (today is {today.isoformat()} UTC).",
            allowed=[],
        )
    return day


def _moment(at: datetime | None) -> str | None:
    return isoformat(at) if at is not None else None


def run_body(run: Run) -> JsonObject:
    return {
        "id": run.id,
        "date": run.day,
        "status": run.status.value,
        "requested_at": isoformat(run.requested_at),
        "started_at": _moment(run.started_at),
        "finished_at": _moment(run.finished_at),
        "error": run.error,
    }


def finding_body(finding: Finding) -> JsonObject:
    intent = finding.payment_intent_id
    return {
        "id": finding.id,
        "provider": finding.provider,
        "kind": finding.kind.value,
        "action": finding.action.value,
        "status": finding.status.value,
        "provider_reference": finding.subject,
        "payment_intent_id": intent,
        "payment_intent_url": f"/v1/payment-intents/{intent}" if intent else None,
        "payorch": finding.payorch_values,
        "at_provider": finding.provider_values,
        "note": finding.note,
        "resolved_at": _moment(finding.resolved_at),
        "created_at": isoformat(finding.created_at),
    }


def report_body(run: Run, findings: list[Finding]) -> JsonObject:
    summary = run.summary or {}
    # A run written before ``reconciled`` existed reconciled every provider it lists.
    providers = [
        {"provider": name, "reconciled": True, **value}
        for name, value in summary.items()
        if isinstance(value, dict)
    ]
    return {"run": run_body(run), "providers": providers, "findings": [finding_body(f) for f in findings]}
