"""The hold operations of both clients (capture_method manual; docs/client.md, "Holds"), mixed
into PayorchClient and AsyncPayorchClient: capture all or part of a held payment, or void it.
Each sends an Idempotency-Key (one per call unless given) and is retried with it: the server
answers a retry with the first answer."""

from __future__ import annotations

from typing import Any

from payorch.client._core import Call, clean, parse, post, segment
from payorch.client.models import Payment

PAYMENTS = "/v1/payments"


def capture_payment(payment_id: str, amount: int | None, idempotency_key: str | None) -> Call:
    return post(
        f"{PAYMENTS}/{segment(payment_id)}/capture",
        clean({"amount": amount}),
        idempotency_key=idempotency_key,
        server_idempotent=True,
    )


def void_payment(payment_id: str, idempotency_key: str | None) -> Call:
    return post(
        f"{PAYMENTS}/{segment(payment_id)}/void",
        {},
        idempotency_key=idempotency_key,
        server_idempotent=True,
    )


class SyncHolds:
    def request(self, call: Call) -> Any:
        raise NotImplementedError  # PayorchClient's

    def capture_payment(
        self, payment_id: str, amount: int | None = None, *, idempotency_key: str | None = None
    ) -> Payment:
        """POST /v1/payments/{id}/capture: ``amount`` in minor units (None: all that is held;
        less releases the rest). The payment afterwards (AUTHORIZED, amount_captured). More than
        is held: InvalidRequestError CAPTURE_AMOUNT_EXCEEDED (``details["amount_capturable"]``);
        not held: InvalidStateError."""
        return parse(Payment, self.request(capture_payment(payment_id, amount, idempotency_key)))

    def void_payment(self, payment_id: str, *, idempotency_key: str | None = None) -> Payment:
        """POST /v1/payments/{id}/void: release the hold; the payment afterwards (VOIDED, its
        intent CANCELLED). Not held: InvalidStateError."""
        return parse(Payment, self.request(void_payment(payment_id, idempotency_key)))


class AsyncHolds:
    async def request(self, call: Call) -> Any:
        raise NotImplementedError  # AsyncPayorchClient's

    async def capture_payment(
        self, payment_id: str, amount: int | None = None, *, idempotency_key: str | None = None
    ) -> Payment:
        """As PayorchClient.capture_payment."""
        return parse(
            Payment, await self.request(capture_payment(payment_id, amount, idempotency_key))
        )

    async def void_payment(self, payment_id: str, *, idempotency_key: str | None = None) -> Payment:
        """As PayorchClient.void_payment."""
        return parse(Payment, await self.request(void_payment(payment_id, idempotency_key)))
