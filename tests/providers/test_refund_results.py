"""providers/refund_results.py: a provider's refund answer in payorch's refund outcomes."""

from __future__ import annotations

import pytest

from payorch.providers.base import ProviderRefundOutcome, ProviderRejected, RefundRequest
from payorch.providers.refund_results import RefundStatuses, from_refunded_total, from_word
from payorch.providers.words import ProviderWord

PROVIDER = "provider_t_redirect_get"
STATUSES = RefundStatuses(PROVIDER, frozenset({"done"}), frozenset({"failed", "canceled"}))


def request(amount: int = 300, refunded_before: int = 200) -> RefundRequest:
    return RefundRequest("rfd_1", "pay_1", amount, "USD", 1000, refunded_before)


def test_an_applied_status_succeeds_with_the_refund_asked_and_its_reference() -> None:
    result = STATUSES.result(request(), "done", "re_1")
    assert result.outcome is ProviderRefundOutcome.SUCCEEDED
    assert (result.amount, result.provider_refund_reference) == (300, "re_1")
    assert result.details == {"status": "done"}


@pytest.mark.parametrize("status", ["pending", "requires_action", None])
def test_any_other_status_is_pending(status: str | None) -> None:
    result = STATUSES.result(request(), status, "re_1")
    assert result.outcome is ProviderRefundOutcome.PENDING
    assert result.details == {"status": status}


def test_a_refused_status_is_the_provider_refusing() -> None:
    with pytest.raises(ProviderRejected) as refused:
        STATUSES.result(request(), "failed", "re_1", failure="expired_card", status_code=201)
    assert refused.value.reason == "refund failed: expired_card"
    assert (refused.value.code, refused.value.status_code, refused.value.provider) == (
        "failed",
        201,
        PROVIDER,
    )
    with pytest.raises(ProviderRejected, match="^refund canceled$"):
        STATUSES.result(request(), "canceled", None)


@pytest.mark.parametrize(
    ("refunded", "outcome"),
    [
        (500, ProviderRefundOutcome.SUCCEEDED),  # up by the refund
        (900, ProviderRefundOutcome.SUCCEEDED),  # and more (another refund since)
        (200, ProviderRefundOutcome.NOT_APPLIED),  # unchanged: safe to try again
        (350, ProviderRefundOutcome.PENDING),  # part of it: ask again
        (None, ProviderRefundOutcome.PENDING),  # the provider does not show it
    ],
)
def test_a_refund_read_back_from_the_refunded_total(
    refunded: int | None, outcome: ProviderRefundOutcome
) -> None:
    result = from_refunded_total(request(), refunded, {"status": "x", "refunded_amount": refunded})
    assert result.outcome is outcome
    assert result.amount == 300
    assert result.details == {"status": "x", "refunded_amount": refunded}


def test_a_refund_by_its_word_is_pending_until_said_then_succeeded_or_refused_with_its_reason() -> None:
    pending = from_word(request(), None, "PSP0000000000009")
    assert (pending.outcome, pending.amount, pending.provider_refund_reference) == (
        ProviderRefundOutcome.PENDING, 300, "PSP0000000000009"
    )
    said = ProviderWord("REFUND", "PSP0000000000009", True, original_reference="PSP0000000000001")
    assert from_word(request(), said, "PSP0000000000009").outcome is ProviderRefundOutcome.SUCCEEDED
    refused = from_word(request(), ProviderWord("REFUND", "PSP0000000000009", False, reason="Insufficient balance"), "x")
    assert (refused.outcome, refused.reason) == (ProviderRefundOutcome.REFUSED, "Insufficient balance")
    unsaid = from_word(request(), ProviderWord("REFUND", "PSP0000000000009", False), "x")
    assert unsaid.reason == "the provider refused the refund"
