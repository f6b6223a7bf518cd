"""Simulated provider D (Adyen Hosted Checkout): its Checkout API, hosted page and notifications."""
