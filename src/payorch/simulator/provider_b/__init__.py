"""Simulated provider B: the Checkout Pro API, its checkout page and its notifications."""
