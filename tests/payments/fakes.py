"""A fake provider behind the refund seam: it keeps the refunds it applied, per refund id
(like a provider honouring an idempotency key), and can be told how to answer."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from payorch.payments.refund_gateway import (
    GatewayRefundAnswer,
    GatewayRefundOutcome,
    LookupAnswer,
    LookupOutcome,
    RefundOrder,
)

OK = "ok"  # applies, answers SUCCEEDED
REJECT = "reject"  # applies nothing, answers FAILED
TIMEOUT_APPLIED = "timeout_applied"  # applies, but the answer is lost (UNKNOWN)
TIMEOUT_NOT_APPLIED = "timeout_not_applied"  # applies nothing, answers UNKNOWN (a 5xx)
CRASH = "crash"  # raises, as a broken adapter would


@dataclass
class FakeGateway:
    mode: str = OK
    # None: tell the truth; "unknown": cannot tell; "refused": the provider said no, late
    lookup_mode: str | None = None
    delay: float = 0.0
    applied: dict[str, int] = field(default_factory=dict)  # refund id -> amount
    refund_calls: list[str] = field(default_factory=list)
    lookup_calls: list[str] = field(default_factory=list)

    async def refund(self, order: RefundOrder) -> GatewayRefundAnswer:
        self.refund_calls.append(order.refund_id)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.mode == CRASH:
            raise RuntimeError("adapter bug")
        if self.mode in (OK, TIMEOUT_APPLIED):
            self.applied[order.refund_id] = order.amount
        if self.mode == OK:
            return GatewayRefundAnswer(
                GatewayRefundOutcome.SUCCEEDED, provider_refund_id="prv-" + order.refund_id
            )
        if self.mode == REJECT:
            return GatewayRefundAnswer(GatewayRefundOutcome.FAILED, "16: refund not allowed")
        return GatewayRefundAnswer(GatewayRefundOutcome.UNKNOWN)

    async def lookup(self, order: RefundOrder) -> LookupAnswer:
        self.lookup_calls.append(order.refund_id)
        if self.lookup_mode == "unknown":
            return LookupAnswer(LookupOutcome.UNKNOWN)
        if self.lookup_mode == "refused":
            return LookupAnswer(LookupOutcome.REFUSED, failure_reason="Insufficient balance on payment")
        if order.refund_id in self.applied:
            return LookupAnswer(LookupOutcome.APPLIED, "prv-" + order.refund_id)
        return LookupAnswer(LookupOutcome.NOT_APPLIED)

    def total_applied(self) -> int:
        return sum(self.applied.values())


@pytest.fixture
def gateway() -> FakeGateway:
    return FakeGateway()


@pytest.fixture
def refund_gateway(request: pytest.FixtureRequest) -> FakeGateway | None:
    """The runtime is built with the fake for the tests that ask for ``gateway``; the others
    refund through the provider adapters."""
    if "gateway" in request.fixturenames:
        fake: FakeGateway = request.getfixturevalue("gateway")
        return fake
    return None
