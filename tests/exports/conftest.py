"""The exports' tests refund through the payments tests' fake provider."""

from tests.payments.fakes import gateway, refund_gateway

__all__ = ["gateway", "refund_gateway"]
