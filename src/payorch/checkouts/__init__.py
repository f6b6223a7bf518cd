"""Checkouts domain."""
