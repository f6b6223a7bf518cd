"""The comparison itself, with no I/O: one connector's provider records of a day against
payorch's books of the same day (docs/reconciliation.md, "What is compared")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from payorch.jsontypes import JsonObject
from payorch.providers.base import DisputeObservation, DisputeState
from payorch.providers.reconciliation import ProviderPaymentRecord, ProviderPaymentState
from payorch.reconciliation.records import BookEntry, FindingAction, FindingKind

# An intent still waiting for its outcome: an approval the provider shows is final for it.
OPEN_INTENT = frozenset({"REQUIRES_ACTION", "PROCESSING"})
APPROVED, NOT_PAID = FindingKind.APPROVED_NOT_RECORDED, FindingKind.NOT_PAID_AT_PROVIDER
# payorch's payments that took no money: held (the provider shows a hold, not yet paid), or a
# hold released or lapsed (the provider shows nothing paid). Not a discrepancy either way.
HELD = "REQUIRES_CAPTURE"
NOTHING_TAKEN = frozenset({HELD, "VOIDED", "EXPIRED"})


@dataclass(frozen=True, slots=True)
class Discrepancy:
    kind: FindingKind
    subject: str
    payment_intent_id: str | None
    action: FindingAction
    payorch_values: JsonObject
    provider_values: JsonObject
    dispute: DisputeObservation | None = None  # what the provider shows about a dispute


@dataclass
class Comparison:
    matched: int = 0
    matched_amounts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    discrepancies: list[Discrepancy] = field(default_factory=list)


def book_values(entry: BookEntry | None) -> JsonObject:
    if entry is None:
        return {"known": False}
    return {
        "known": True,
        "payment_intent_id": entry.payment_intent_id,
        "intent_status": entry.intent_status,
        "payment_reference": entry.payment_reference,
        "amount": entry.payment_amount if entry.payment_amount is not None else entry.intent_amount,
        "payment_status": entry.payment_status,
        "amount_captured": entry.taken,
        "currency": entry.payment_currency or entry.intent_currency,
        "refunded": entry.refunded,
        "dispute_status": entry.dispute_status,
    }


def record_values(record: ProviderPaymentRecord | None, held_dispute: str | None = None) -> JsonObject:
    """The provider's side; its dispute as the status it stands for against ``held_dispute``."""
    if record is None:
        return {"known": False}
    return {
        "known": record.state is not ProviderPaymentState.UNKNOWN,
        "reference": record.reference,
        "status": record.provider_status,
        "state": record.state.value,
        "amount": record.amount,
        "currency": record.currency,
        "refunded": record.refunded,
        "dispute": dispute_there(record.dispute, held_dispute),
        "dispute_kind": record.dispute.kind if record.dispute is not None else None,
    }


def dispute_there(seen: DisputeObservation | None, held: str | None) -> str | None:
    """The dispute status (OPEN, WON, LOST) the provider's read stands for, given the one payorch
    holds: plainly paid again ends an open dispute as won, refunded by the provider as lost
    (payments/disputes.py reads them so). None: the read says nothing about a dispute."""
    if seen is None:
        return None
    if seen.state in (DisputeState.OPEN, DisputeState.WON, DisputeState.LOST):
        return seen.state.value
    if held == "OPEN":
        return "WON" if seen.state is DisputeState.CLEARED else "LOST"
    return None


def _finding(
    kind: FindingKind,
    action: FindingAction,
    record: ProviderPaymentRecord | None,
    entry: BookEntry | None,
    subject: str,
) -> Discrepancy:
    return Discrepancy(
        kind,
        subject,
        entry.payment_intent_id if entry is not None else None,
        action,
        book_values(entry),
        record_values(record, entry.dispute_status if entry is not None else None),
        record.dispute if record is not None else None,
    )


def _of_paid(record: ProviderPaymentRecord, entry: BookEntry) -> list[Discrepancy]:
    """A payment the provider shows paid, against the intent payorch holds for it."""
    flag, apply = FindingAction.FLAGGED, FindingAction.APPLIED
    if entry.payment_reference is None:
        # Waiting for the outcome: the provider's approval is final (the confirmation path
        # applies it). An intent that ended otherwise (expired, cancelled...) is for a person.
        action = apply if entry.intent_status in OPEN_INTENT else flag
        return [_finding(FindingKind.APPROVED_NOT_RECORDED, action, record, entry, record.reference)]
    if entry.payment_reference != record.reference:  # a second payment for one intent
        return [_finding(FindingKind.APPROVED_NOT_RECORDED, flag, record, entry, record.reference)]
    if entry.payment_status in NOTHING_TAKEN:
        # Money taken at the provider that payorch holds as a hold: a capture whose answer never
        # came back (or one made at the provider): read the hold and settle it. Released or
        # lapsed here and taken there is for a person.
        action = apply if entry.payment_status == HELD else flag
        return [_finding(FindingKind.APPROVED_NOT_RECORDED, action, record, entry, record.reference)]
    found = []
    if record.amount != entry.payment_amount or record.currency != entry.payment_currency:
        found.append(_finding(FindingKind.AMOUNT_MISMATCH, flag, record, entry, record.reference))
    if record.refunded > entry.refunded:
        found.append(_finding(FindingKind.REFUNDED_OUTSIDE, flag, record, entry, record.reference))
    there = dispute_there(record.dispute, entry.dispute_status)
    if there is not None and there != entry.dispute_status:
        # Repaired through the disputes path with the provider's read (service._apply).
        unrecorded = entry.dispute_status is None
        kind = FindingKind.DISPUTE_NOT_RECORDED if unrecorded else FindingKind.DISPUTE_MISMATCH
        found.append(_finding(kind, apply, record, entry, record.reference))
    return found


def compare(
    records: Iterable[ProviderPaymentRecord],
    day_books: Sequence[BookEntry],
    other_books: Sequence[BookEntry],
    day: tuple[datetime, datetime],
) -> Comparison:
    """``day_books``: the connector's checkouts made that day; ``other_books``: intents the
    records name that were checked out on another day (compared on their own day, skipped)."""
    start, end = day
    result = Comparison()
    by_payment = {e.payment_reference: e for e in day_books if e.payment_reference is not None}
    by_checkout = {e.checkout_reference: e for e in day_books}
    by_intent = {e.payment_intent_id: e for e in day_books}
    elsewhere = {e.payment_intent_id for e in other_books}
    seen: set[str] = set()
    for record in records:
        entry = (
            by_payment.get(record.reference)
            or (by_checkout.get(record.checkout_reference) if record.checkout_reference else None)
            or (by_intent.get(record.payment_intent_id) if record.payment_intent_id else None)
        )
        if entry is None:
            of_day = record.created_at is None or start <= record.created_at < end
            if record.payment_intent_id in elsewhere or not of_day:
                continue  # another day's payment
            if record.state is ProviderPaymentState.PAID:  # unknown to payorch: an orphan
                result.discrepancies.append(
                    _finding(APPROVED, FindingAction.FLAGGED, record, None, record.reference)
                )
            continue
        seen.add(record.reference)
        if record.state is ProviderPaymentState.PAID:
            found = _of_paid(record, entry)
            if not found and entry.payment_currency is not None and entry.payment_amount is not None:
                result.matched += 1
                # Money taken: a hold counts what was captured, not what was held.
                result.matched_amounts[entry.payment_currency] += entry.taken
            result.discrepancies += found
        elif entry.payment_reference == record.reference and entry.payment_status not in NOTHING_TAKEN:
            result.discrepancies.append(
                _finding(NOT_PAID, FindingAction.FLAGGED, record, entry, record.reference)
            )
    paid_here = {e.payment_reference: e for e in day_books if e.payment_reference is not None}
    for reference, entry in paid_here.items():
        if reference not in seen:  # the provider does not show it at all
            result.discrepancies.append(
                _finding(FindingKind.NOT_PAID_AT_PROVIDER, FindingAction.FLAGGED, None, entry, reference)
            )
    return result
