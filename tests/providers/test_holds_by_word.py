"""providers/holds.py ``by_word``: a capture or void the provider received, told by its word:
none yet is PENDING under the provider's reference, a failure refuses with the provider's reason,
a success is the state the adapter reads from the word."""

from __future__ import annotations

import pytest

from payorch.providers.base import ProviderRejected
from payorch.providers.holds import HoldState, HoldStatus, by_word
from payorch.providers.words import ProviderWord

PROVIDER = "provider_t_redirect_get"
CAPTURED = ProviderWord("CAPTURE", "PSP0000000000002", True, original_reference="PSP0000000000001", amount=600)


def _captured(word: ProviderWord) -> HoldState:
    return HoldState(HoldStatus.CAPTURED, word.amount or 0, details={"event": word.event})


def test_no_word_yet_is_pending_under_the_providers_reference() -> None:
    state = by_word(None, "PSP0000000000002", "capture", PROVIDER, _captured)
    assert state == HoldState(HoldStatus.PENDING, details={"psp_reference": "PSP0000000000002"})


def test_a_success_is_the_state_read_from_the_word() -> None:
    assert by_word(CAPTURED, "PSP0000000000002", "capture", PROVIDER, _captured) == _captured(CAPTURED)


@pytest.mark.parametrize(("reason", "said"), [("Insufficient balance", "Insufficient balance"), (None, "no reason given")])
def test_a_failure_is_refused_with_the_providers_reason(reason: str | None, said: str) -> None:
    failed = ProviderWord("CANCELLATION", "PSP0000000000003", False, reason=reason)
    with pytest.raises(ProviderRejected) as refused:
        by_word(failed, "PSP0000000000003", "void", PROVIDER, _captured)
    assert refused.value.reason == f"void refused: {said}"
    assert refused.value.provider == PROVIDER
