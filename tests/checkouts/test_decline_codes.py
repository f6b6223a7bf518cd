"""Each provider's answers in payorch's payment error codes (providers/<provider>/decline_codes.py,
docs/api.md "Why a payment failed"), as its registration declares them: no database needed."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import last_payment_error, payment_error
from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.provider_c import PROVIDER_C
from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.registry import PROVIDER_IDS, registration_of
from tests.kit import each_provider_has_cases

A, B, C, D = PROVIDER_A, PROVIDER_B, PROVIDER_C, PROVIDER_D
FAILED, CANCELLED, EXPIRED = PaymentOutcome.FAILED, PaymentOutcome.CANCELLED, PaymentOutcome.EXPIRED
AT = datetime(2026, 11, 28, 4, 0, tzinfo=UTC)
ROUTING_MD = Path(__file__).resolve().parents[2] / "docs" / "routing.md"


def error_of(
    provider: str, outcome: PaymentOutcome, reason: str | None = None, **details: object
) -> tuple[object, object]:
    result = PaymentResult(outcome, reason=reason, details=dict(details))
    found = last_payment_error(registration_of(provider).payment_errors, result, provider=provider, at=AT)
    assert found is not None
    return found["code"], found["provider_code"]


# (provider, its answer, what payorch records): each provider's own words, written per provider.
CODES: list[tuple[str, PaymentOutcome, dict[str, object], tuple[str, str]]] = [
    (A, FAILED, {"status": "FAILED", "response_code": -1, "card_last4": "0568"}, ("declined", "-1")),
    (
        A,
        FAILED,
        {"status": "FAILED", "response_code": -3, "card_last4": "0568"},
        ("provider_error", "-3"),
    ),
    (
        A,
        FAILED,
        {"status": "FAILED", "response_code": -5, "card_last4": "0568"},
        ("fraud_suspected", "-5"),
    ),
    (A, FAILED, {"status": "FAILED", "response_code": -99, "card_last4": "0568"}, ("declined", "-99")),
    (
        A,
        FAILED,
        {"status": "FAILED", "response_code": -1, "return_shape": "error"},
        ("provider_error", "FAILED/-1"),
    ),
    (
        A,
        CANCELLED,
        {"status": "FAILED", "response_code": -1, "return_shape": "aborted"},
        ("cancelled_by_buyer", "FAILED/-1"),
    ),
    (
        A,
        EXPIRED,
        {"status": "FAILED", "response_code": -1, "return_shape": "timeout"},
        ("expired", "FAILED/-1"),
    ),
    (
        B,
        FAILED,
        {"status": "rejected", "status_detail": "cc_rejected_insufficient_amount"},
        ("insufficient_funds", "cc_rejected_insufficient_amount"),
    ),
    (
        B,
        FAILED,
        {"status": "rejected", "status_detail": "cc_rejected_bad_filled_security_code"},
        ("invalid_card_details", "cc_rejected_bad_filled_security_code"),
    ),
    (
        B,
        FAILED,
        {"status": "rejected", "status_detail": "cc_rejected_high_risk"},
        ("fraud_suspected", "cc_rejected_high_risk"),
    ),
    (B, FAILED, {"status": "rejected", "status_detail": "something_new"}, ("declined", "something_new")),
    (B, FAILED, {"status": "cancelled", "status_detail": "expired"}, ("expired", "expired")),
    (
        C,
        FAILED,
        {
            "last_payment_error_type": "card_error",
            "last_payment_error_code": "card_declined",
            "last_payment_error_decline_code": "insufficient_funds",
        },
        ("insufficient_funds", "insufficient_funds"),
    ),
    (
        C,
        FAILED,
        {"last_payment_error_type": "card_error", "last_payment_error_code": "incorrect_cvc"},
        ("invalid_card_details", "incorrect_cvc"),
    ),
    (
        C,
        FAILED,
        {
            "last_payment_error_type": "card_error",
            "last_payment_error_code": "card_declined",
            "last_payment_error_decline_code": "fraudulent",
        },
        ("fraud_suspected", "fraudulent"),
    ),
    (C, FAILED, {"last_payment_error_type": "api_error"}, ("provider_error", "api_error")),
    (D, FAILED, {"refusal_reason": "Not enough balance"}, ("insufficient_funds", "12")),
    (D, FAILED, {"refusal_reason": "CVC Declined"}, ("invalid_card_details", "24")),
    (D, FAILED, {"refusal_reason": "Issuer Suspected Fraud"}, ("fraud_suspected", "31")),
    (D, FAILED, {"refusal_reason": "Acquirer Error"}, ("provider_error", "4")),
    (D, FAILED, {"refusal_reason": "Refused"}, ("declined", "2")),
    (D, FAILED, {"refusal_reason": "Something new"}, ("declined", None)),
]


def test_every_registered_provider_has_its_codes_here() -> None:
    each_provider_has_cases({provider for provider, *_ in CODES}, "CODES")


@pytest.mark.parametrize(("provider", "outcome", "details", "expected"), CODES)
def test_each_providers_codes(
    provider: str, outcome: PaymentOutcome, details: dict[str, object], expected: tuple[str, str]
) -> None:
    assert error_of(provider, outcome, **details) == expected


def test_provider_c_an_earlier_decline_does_not_name_a_cancel() -> None:
    declined = {"last_payment_error_type": "card_error", "last_payment_error_decline_code": "generic_decline"}
    assert error_of(C, CANCELLED, "left", **declined) == ("cancelled_by_buyer", None)


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_without_the_providers_words_only_the_outcome_is_known(provider: str) -> None:
    assert error_of(provider, FAILED, "refused") == ("declined", None)
    assert error_of(provider, CANCELLED, "left") == ("cancelled_by_buyer", None)
    # payorch's own expiry (no provider answer) and moves that end nothing record nothing.
    for outcome in (EXPIRED, PaymentOutcome.PROCESSING, PaymentOutcome.AUTHORIZED, PaymentOutcome.NOT_PAID):
        result = PaymentResult(outcome, reason="x")
        assert (
            last_payment_error(registration_of(provider).payment_errors, result, provider=provider, at=AT)
            is None
        )


def test_the_shape() -> None:
    result = PaymentResult(FAILED, details={"status": "rejected", "status_detail": "cc_rejected_card_error"})
    assert last_payment_error(registration_of(B).payment_errors, result, provider=B, at=AT) == {
        "code": "provider_error",
        "message": "The provider could not process the payment.",
        "provider": B,
        "provider_code": "cc_rejected_card_error",
        "provider_message": "The card could not be processed.",
        "at": "2026-11-28T04:00:00.000Z",
    }


# (provider, its answer, worth another try at another provider): docs/routing.md, "Which declines
# are retried".
RETRYABLE: list[tuple[str, dict[str, object], bool]] = [
    (A, {"status": "FAILED", "response_code": -4, "card_last4": "0568"}, True),
    (A, {"status": "FAILED", "response_code": -3, "card_last4": "0568"}, True),
    (A, {"status": "FAILED", "response_code": -1, "card_last4": "0568"}, False),
    (A, {"status": "FAILED", "response_code": -5, "card_last4": "0568"}, False),
    (A, {"status": "FAILED", "response_code": -1, "return_shape": "error"}, True),
    (B, {"status": "rejected", "status_detail": "cc_rejected_other_reason"}, True),
    (B, {"status": "rejected", "status_detail": "cc_rejected_card_error"}, True),
    (B, {"status": "rejected", "status_detail": "cc_rejected_insufficient_amount"}, False),
    (B, {"status": "rejected", "status_detail": "cc_rejected_bad_filled_date"}, False),
    (B, {"status": "rejected", "status_detail": "something_new"}, False),
    (C, {"last_payment_error_type": "card_error", "last_payment_error_decline_code": "generic_decline"}, True),
    (C, {"last_payment_error_type": "card_error", "last_payment_error_decline_code": "issuer_not_available"}, True),
    (C, {"last_payment_error_type": "card_error", "last_payment_error_decline_code": "stolen_card"}, False),
    (C, {"last_payment_error_type": "card_error", "last_payment_error_code": "expired_card"}, False),
    (C, {"last_payment_error_type": "api_error"}, True),
    (D, {"refusal_reason": "Refused"}, True),
    (D, {"refusal_reason": "Issuer Unavailable"}, True),
    (D, {"refusal_reason": "Not enough balance"}, False),
    (D, {"refusal_reason": "FRAUD"}, False),
]


def test_every_registered_provider_says_what_is_retried() -> None:
    each_provider_has_cases({provider for provider, *_ in RETRYABLE}, "RETRYABLE")


def retried_in_the_docs(provider: str) -> list[str]:
    """The codes docs/routing.md's "Which declines are retried" gives as retried for ``provider``
    (its row's second cell, in backticks; ``*`` stands for any characters)."""
    section = ROUTING_MD.read_text().split("### Which declines are retried", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith(f"| `{provider}`")]
    assert rows, f"docs/routing.md, 'Which declines are retried': no row for {provider}: write it"
    return re.findall(r"`([^`]+)`", rows[0].strip().strip("|").split("|")[1])


@pytest.mark.parametrize(("provider", "details", "retryable"), RETRYABLE)
def test_which_declines_are_worth_another_provider(
    provider: str, details: dict[str, object], retryable: bool
) -> None:
    result = PaymentResult(FAILED, details=dict(details))
    found = payment_error(registration_of(provider).payment_errors, result)
    assert found is not None and found.retryable is retryable
    # The docs say the same (a code not named as retried is not).
    said = any(fnmatchcase(found.provider_code or "", code) for code in retried_in_the_docs(provider))
    assert said is retryable, (
        f"docs/routing.md, 'Which declines are retried': {provider}'s {found.provider_code!r} belongs "
        f"in its {'retried' if retryable else 'not retried'} cell"
    )


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_without_the_providers_words_nothing_is_retried(provider: str) -> None:
    found = payment_error(registration_of(provider).payment_errors, PaymentResult(FAILED, reason="refused"))
    assert found is not None and not found.retryable
