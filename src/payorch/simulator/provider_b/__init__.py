"""Simulated provider B: Checkout Pro API (preferences, payments, refunds), page and notifications."""
