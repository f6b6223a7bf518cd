"""The dashboard's tests refund through the payments tests' fake provider when they ask for
``gateway``."""

from tests.payments.fakes import gateway, refund_gateway

__all__ = ["gateway", "refund_gateway"]
