"""Fixtures of the payments tests: a fake provider behind the refund seam (tests/payments/fakes.py).
Paid intents come from tests/kit.py's ``authorized_payment``."""

from tests.payments.fakes import gateway, refund_gateway

__all__ = ["gateway", "refund_gateway"]
