"""Simulated provider C: Stripe's Checkout Sessions, PaymentIntents, Refunds and signed events."""
