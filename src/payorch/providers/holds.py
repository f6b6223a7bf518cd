"""The calls on money a provider holds (docs/providers.md, "Holding and capturing"), in our
vocabulary: capture all or part of a hold, release it (void), and read where it stands.

A provider that can hold declares it in its registration (``holds=HoldSupport(...)``) and gives
these calls (``hold_calls=...``). Failures are the adapter contract's: ProviderRejected is a
definite refusal, ProviderUnavailable an unknown outcome (read the hold back with ``read_hold``,
never send it blindly again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from payorch.providers.base import ConnectorContext, ProviderRejected
from payorch.providers.words import ProviderWord


class HoldStatus(StrEnum):
    HELD = "HELD"  # authorized and held: nothing captured yet
    CAPTURED = "CAPTURED"  # captured (amount_captured); the rest released
    RELEASED = "RELEASED"  # released on request (void), nothing captured
    LAPSED = "LAPSED"  # nobody captured it within the window: released by the provider
    # capture / void only: the provider received it and says its outcome later (a notification
    # that is its word, providers/words.py): the action stays in flight until then.
    PENDING = "PENDING"


@dataclass(frozen=True)
class HoldRef:
    """A held payment as payorch stored it."""

    payment_intent_id: str
    provider_reference: str  # A: the token; C: the PaymentIntent id
    authorization_code: str | None
    amount: int  # what is held
    currency: str
    capture_before: datetime | None


@dataclass(frozen=True)
class HoldState:
    status: HoldStatus
    amount_captured: int = 0
    amount_released: int = 0  # what the provider released after a partial capture
    details: dict[str, Any] = field(default_factory=dict)


class HoldCalls(Protocol):
    async def capture(self, ctx: ConnectorContext, hold: HoldRef, amount: int, key: str) -> HoldState:
        """Capture ``amount`` of the hold (``key``: our idempotency key of the capture, where the
        provider takes one). A capture the provider already made answers its state."""
        ...

    async def void(self, ctx: ConnectorContext, hold: HoldRef, key: str) -> HoldState:
        """Release the hold. A hold already released answers RELEASED."""
        ...

    async def read_hold(self, ctx: ConnectorContext, hold: HoldRef) -> HoldState:
        """Where the hold stands at the provider now."""
        ...


async def made_already(
    calls: HoldCalls, ctx: ConnectorContext, hold: HoldRef, capture: int | None
) -> HoldState | None:
    """A capture of ``capture`` (None: a void) the provider refused may be one it already made,
    a retry whose first answer was lost: the hold read back says so (its state), else None and
    the refusal stands."""
    seen = await calls.read_hold(ctx, hold)
    if capture is None:
        made = seen.status in (HoldStatus.RELEASED, HoldStatus.LAPSED)
    else:
        made = seen.status is HoldStatus.CAPTURED and seen.amount_captured == capture
    return seen if made else None


def by_word(
    word: ProviderWord | None, reference: str, operation: str, provider: str,
    state: Callable[[ProviderWord], HoldState],
) -> HoldState:
    """A capture or void the provider received as ``reference``, by its word (providers/words.py):
    none yet is PENDING (asked again under its key, it is the same one), a failure is refused with
    the provider's reason, a success is ``state(word)``."""
    if word is None:
        return HoldState(HoldStatus.PENDING, details={"psp_reference": reference})
    if not word.success:
        raise ProviderRejected(f"{operation} refused: {word.reason or 'no reason given'}", provider=provider)
    return state(word)
