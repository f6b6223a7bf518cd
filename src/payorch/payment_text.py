"""`payorch payments show` as a person reads it: where the intent stands (why it failed, what a
PROCESSING one waits for), where it was routed and why, amounts in the currency's own format
(Babel, amount_text.written: 1500 CLP -> 'CLP 1,500', 1050 USD -> '$10.50'), its payment, refunds
and timeline. The body is the API's (`--json` prints it as is). Also the refusal of a capture
above what is held, as the dashboard and the command line say it."""

from __future__ import annotations

from payorch.amount_text import written
from payorch.jsontypes import JsonObject
from payorch.payments.records import Payment


def over_capture(asked: int, held: Payment) -> str:
    """A capture above what is held, in the currency's own format (never minor units)."""
    currency, capturable = held.currency, held.amount_capturable
    return (
        f"{written(asked, currency)} is more than is held. At most {written(capturable, currency)} "
        "can be captured: type that or less, or leave the amount empty to capture all of it."
    )


def intent_lines(body: JsonObject) -> list[str]:
    currency = str(body["currency"])
    lines = [
        f"{key}: {_text(body.get(key))}"
        for key in ("id", "status", "merchant_account_id", "external_reference", "provider", "created_at")
    ]
    lines.append(f"amount: {_money(body['amount'], currency)}")
    lines += _error(body.get("last_payment_error"))
    lines += _processing(body.get("processing"))
    lines += _routing(body.get("routing"))
    payment = body.get("payment")
    if isinstance(payment, dict):
        refunded = payment.get("refunded_amount")
        lines.append(
            f"payment: {payment['id']} {payment['status']} (authorized {_text(payment.get('authorized_at'))})"
            + (f", refunded {_money(refunded, currency)}" if refunded else "")
        )
    else:
        lines.append("payment: - (none: the provider has not authorized this intent)")
    refunds = body["refunds"]
    assert isinstance(refunds, list)
    for refund in refunds:
        assert isinstance(refund, dict)
        amount = _money(refund["amount"], str(refund["currency"]))
        lines.append(f"refund: {refund['refund_id']} {refund['status']} {amount}")
    timeline = body["timeline"]
    assert isinstance(timeline, list)
    lines.append("timeline:")
    for entry in timeline:
        assert isinstance(entry, dict)
        lines.append(f"  {entry['at']}  {entry['type']}")
    return lines


def match_line(body: JsonObject) -> str:
    """One intent of several with the same external reference."""
    return (
        f"  {body['id']}  {body['status']}  {_money(body['amount'], str(body['currency']))}"
        f"  {body['merchant_account_id']}  {body['created_at']}"
    )


def _error(error: object) -> list[str]:
    """Why the payment did not go through: payorch's code and words, then the provider's."""
    if not isinstance(error, dict):
        return []
    line = f"last payment error: {error['code']}: {error['message']}"
    if error.get("provider_code") is not None or error.get("provider_message") is not None:
        said = ": ".join(
            str(part) for part in (error.get("provider_code"), error.get("provider_message")) if part
        )
        line += f" ({_text(error.get('provider'))} said {said})"
    return [line]


def _processing(waiting: object) -> list[str]:
    if not isinstance(waiting, dict):
        return []
    last = waiting.get("last_check_at")
    return [
        f"processing: waiting for {waiting['provider']} to confirm the payment;"
        f" next check at {_text(waiting.get('next_check_at'))},"
        + (f" asking until {last}" if last is not None else " asking with no limit")
    ]


def _routing(record: object) -> list[str]:
    """The provider chosen and why (docs/routing.md's record, in one line and its lists)."""
    if not isinstance(record, dict):
        return []
    why = [f"strategy {record['strategy']}"]
    if record.get("rule") is not None:
        why.append(f"rule {record['rule']!r}")
    if record.get("version") is not None:
        why.append(f"routing version {record['version']}")
    if record.get("fallback") is not None:
        why.append(f"fallback {record['fallback']}")
    lines = [f"routing: {_text(record.get('chosen'))} ({', '.join(why)})"]
    candidates = record.get("candidates") or []
    assert isinstance(candidates, list)
    if candidates:
        lines.append("  candidates: " + ", ".join(_candidate(c) for c in candidates if isinstance(c, dict)))
    skipped = record.get("skipped") or []
    assert isinstance(skipped, list)
    for item in skipped:
        assert isinstance(item, dict)
        lines.append(f"  skipped {item['provider']}: {item['reason']} ({item['detail']})")
    return lines


def _candidate(candidate: JsonObject) -> str:
    said = [f"priority {candidate['priority']}"]
    if candidate.get("weight") is not None:
        said.append(f"weight {candidate['weight']}%")
    score = candidate.get("score")
    if isinstance(score, dict) and score.get("rate") is not None:
        said.append(f"rate {score['rate']} of {score['attempts']}")
    return f"{candidate['provider']} ({', '.join(said)})"


def _money(minor: object, currency: str) -> str:
    assert isinstance(minor, int)
    return written(minor, currency)


def _text(value: object) -> str:
    return "-" if value is None else str(value)
