"""The complete state machine of a payment intent (docs/api.md, State machine), in one place.

Every status change in the code base goes through ``next_status``; anything not in
TRANSITIONS answers 409 INVALID_STATE.
"""

from __future__ import annotations

from enum import StrEnum

from payorch.errors import InvalidState
from payorch.events.types import EventType


class IntentStatus(StrEnum):
    CREATED = "CREATED"
    REQUIRES_ACTION = "REQUIRES_ACTION"
    PROCESSING = "PROCESSING"
    REQUIRES_CAPTURE = "REQUIRES_CAPTURE"  # manual capture: the provider holds the money
    AUTHORIZED = "AUTHORIZED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"
    PARTIALLY_REFUNDED = "PARTIALLY_REFUNDED"
    REFUNDED = "REFUNDED"


class Move(StrEnum):
    START_CHECKOUT = "start_checkout"  # also a replacement while REQUIRES_ACTION
    PROCESS = "process"  # the provider left the payment in process
    AUTHORIZE = "authorize"
    HOLD = "hold"  # the provider authorized and holds the money (capture_method manual)
    CAPTURE = "capture"  # the merchant captured a hold (POST /v1/payments/{id}/capture)
    VOID = "void"  # the merchant released a hold (POST /v1/payments/{id}/void)
    FAIL = "fail"
    DECLINE_ATTEMPT = "decline_attempt"  # a retryable decline, the buyer offered another provider
    CANCEL = "cancel"  # the buyer at the provider, or the merchant (POST .../cancel)
    EXPIRE = "expire"
    REFUND_PART = "refund_part"  # a refund that leaves something to refund
    REFUND_REST = "refund_rest"  # a refund of everything that was left


S, M = IntentStatus, Move

TRANSITIONS: dict[tuple[IntentStatus, Move], IntentStatus] = {
    (S.CREATED, M.START_CHECKOUT): S.REQUIRES_ACTION,
    (S.REQUIRES_ACTION, M.START_CHECKOUT): S.REQUIRES_ACTION,
    (S.REQUIRES_ACTION, M.PROCESS): S.PROCESSING,
    (S.REQUIRES_ACTION, M.AUTHORIZE): S.AUTHORIZED,
    (S.PROCESSING, M.AUTHORIZE): S.AUTHORIZED,
    (S.REQUIRES_ACTION, M.HOLD): S.REQUIRES_CAPTURE,
    (S.PROCESSING, M.HOLD): S.REQUIRES_CAPTURE,
    (S.REQUIRES_CAPTURE, M.CAPTURE): S.AUTHORIZED,
    (S.REQUIRES_CAPTURE, M.VOID): S.CANCELLED,
    (S.REQUIRES_CAPTURE, M.EXPIRE): S.EXPIRED,  # the hold lapsed at the provider
    (S.REQUIRES_ACTION, M.FAIL): S.FAILED,
    (S.REQUIRES_ACTION, M.DECLINE_ATTEMPT): S.REQUIRES_ACTION,
    (S.PROCESSING, M.FAIL): S.FAILED,
    (S.CREATED, M.CANCEL): S.CANCELLED,  # the merchant cancels before any checkout
    (S.REQUIRES_ACTION, M.CANCEL): S.CANCELLED,
    (S.REQUIRES_ACTION, M.EXPIRE): S.EXPIRED,
    (S.AUTHORIZED, M.REFUND_PART): S.PARTIALLY_REFUNDED,
    (S.AUTHORIZED, M.REFUND_REST): S.REFUNDED,
    (S.PARTIALLY_REFUNDED, M.REFUND_PART): S.PARTIALLY_REFUNDED,
    (S.PARTIALLY_REFUNDED, M.REFUND_REST): S.REFUNDED,
}

# The events each move emits, in this order, in the move's transaction (intents.service.apply_move
# takes their payloads). Refund moves emit none here: refund.succeeded is the refund service's to
# write (it carries refund fields the intent does not know).
EVENTS_OF_MOVE: dict[Move, tuple[EventType, ...]] = {
    M.START_CHECKOUT: (EventType.PAYMENT_CHECKOUT_STARTED,),
    M.PROCESS: (EventType.PAYMENT_PROCESSING,),
    M.AUTHORIZE: (EventType.PAYMENT_AUTHORIZED,),
    M.HOLD: (EventType.PAYMENT_AUTHORIZED,),
    M.CAPTURE: (EventType.PAYMENT_CAPTURED,),
    M.VOID: (EventType.PAYMENT_VOIDED,),
    M.FAIL: (EventType.PAYMENT_FAILED,),
    M.DECLINE_ATTEMPT: (EventType.PAYMENT_ATTEMPT_FAILED,),
    M.CANCEL: (EventType.PAYMENT_CANCELLED,),
    M.EXPIRE: (EventType.PAYMENT_EXPIRED,),
    M.REFUND_PART: (),
    M.REFUND_REST: (),
}

FINAL = frozenset({S.FAILED, S.CANCELLED, S.EXPIRED, S.REFUNDED})


def next_status(current: IntentStatus | str, move: Move) -> IntentStatus:
    status = IntentStatus(current)
    try:
        return TRANSITIONS[(status, move)]
    except KeyError:
        raise InvalidState(status.value, allowed=statuses_allowing(move)) from None


def statuses_allowing(move: Move) -> list[str]:
    """The statuses from which ``move`` is possible, in the order of IntentStatus."""
    return [s.value for s in IntentStatus if (s, move) in TRANSITIONS]


def allowed(current: IntentStatus | str, move: Move) -> bool:
    return (IntentStatus(current), move) in TRANSITIONS
