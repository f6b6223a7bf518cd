"""Simulated provider A: Webpay Plus REST 1.2 API and its payment page."""
