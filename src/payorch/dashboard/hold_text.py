"""What the intent page says of a hold (capture_method manual): held and until when, voided, or
lapsed; the amounts in the currency's own format, the deadline in UTC and how far off."""

from __future__ import annotations

from datetime import datetime

from payorch.amount_text import written
from payorch.dashboard.web import deadline, utc
from payorch.payments.records import Payment

# (title, why, next step) as payorch.dashboard.intent.Outcome takes them.
Said = tuple[str, list[str], str | None]


def hold_outcome(payment: Payment, now: datetime) -> Said | None:
    """The outcome of a manual payment that is held, voided or lapsed (None: anything else)."""
    if payment.capture_method != "manual":
        return None
    currency = payment.currency
    if payment.status == "REQUIRES_CAPTURE":
        by = deadline(payment.capture_before, now)
        why = [
            f"{payment.provider} holds {written(payment.amount_capturable, currency)} of the buyer's "
            f"money; nothing is taken until it is captured. Capture by {by}.",
            "Capture takes all of it or part (the provider releases the rest); void releases all "
            "of it. Not captured by then, the hold lapses and the intent ends EXPIRED.",
        ]
        if payment.hold_action is not None:
            why.append(
                f"A {payment.hold_action} was sent to {payment.provider} and its answer is not in "
                f"yet: payorch reads the provider again at {utc(payment.hold_action_check_at)}."
            )
        step = "Capture it once the order can be fulfilled, or void it if it will not be."
        return ("Held: waiting for a capture.", why, step)
    if payment.status == "VOIDED":
        released = written(payment.amount, currency)
        why = [f"The hold of {released} was voided: {payment.provider} released it to the buyer."]
        return ("Voided; nothing was charged.", why, None)
    if payment.status == "EXPIRED":
        why = [
            f"Nobody captured the hold of {written(payment.amount, currency)} by "
            f"{utc(payment.capture_before)}: it lapsed and {payment.provider} released it."
        ]
        return (
            "The hold lapsed; nothing was charged.",
            why,
            "Start a new payment intent if the buyer still wants to pay.",
        )
    return None
