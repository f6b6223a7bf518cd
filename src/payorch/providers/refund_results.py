"""A provider's refund answer in payorch's vocabulary (``ProviderRefundOutcome``), the same way
for every provider (docs/providers.md, "Writing an adapter"):

- ``RefundStatuses``: what a refund object's status means. Applied is SUCCEEDED; refused
  (nothing refunded) is ProviderRejected; anything else, or no status, is PENDING (read it back
  later with ``read_refund``).
- ``from_refunded_total``: an unknown refund read back from how much of the payment the provider
  shows refunded. Up by the refund: SUCCEEDED; unchanged: NOT_APPLIED (safe to try again);
  anything else, or a total it does not show: PENDING.
- ``from_word``: a refund the provider received, by its word (providers/words.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from payorch.providers.base import (
    ProviderRefundOutcome,
    ProviderRefundResult,
    ProviderRejected,
    RefundRequest,
)
from payorch.providers.words import ProviderWord


@dataclass(frozen=True, slots=True)
class RefundStatuses:
    """One provider's refund statuses: which mean applied and which refused."""

    provider: str
    succeeded: frozenset[str]
    refused: frozenset[str]

    def result(
        self,
        request: RefundRequest,
        status: str | None,
        reference: str | None,
        *,
        failure: str | None = None,
        status_code: int | None = None,
    ) -> ProviderRefundResult:
        """The refund ``reference`` (our ``request``) at ``status``; ``failure``: the provider's
        words for a refusal, ``status_code``: the HTTP status of the answer that said it."""
        details = {"status": status}
        if status in self.succeeded:
            outcome = ProviderRefundOutcome.SUCCEEDED
            return ProviderRefundResult(outcome, request.amount, reference, details=details)
        if status in self.refused:
            raise ProviderRejected(
                f"refund {status}" + (f": {failure}" if failure else ""),
                provider=self.provider,
                code=status,
                status_code=status_code,
            )
        outcome = ProviderRefundOutcome.PENDING
        return ProviderRefundResult(outcome, request.amount, reference, details=details)


def from_refunded_total(
    request: RefundRequest, refunded: int | None, details: Mapping[str, object]
) -> ProviderRefundResult:
    """``request`` read back from the payment's refunded total (minor units; None: not shown)."""
    if refunded is None:
        outcome = ProviderRefundOutcome.PENDING
    elif refunded >= request.refunded_before + request.amount:
        outcome = ProviderRefundOutcome.SUCCEEDED
    elif refunded == request.refunded_before:
        outcome = ProviderRefundOutcome.NOT_APPLIED
    else:
        outcome = ProviderRefundOutcome.PENDING
    return ProviderRefundResult(outcome, request.amount, details=dict(details))


def from_word(request: RefundRequest, word: ProviderWord | None, reference: str) -> ProviderRefundResult:
    """The refund ``reference`` the provider received, by its word: none yet is PENDING, a success
    SUCCEEDED, a failure REFUSED with the provider's reason."""
    if word is None or word.success:
        outcome = ProviderRefundOutcome.PENDING if word is None else ProviderRefundOutcome.SUCCEEDED
        return ProviderRefundResult(outcome, request.amount, reference)
    reason = word.reason or "the provider refused the refund"
    return ProviderRefundResult(ProviderRefundOutcome.REFUSED, request.amount, reference, reason=reason)
