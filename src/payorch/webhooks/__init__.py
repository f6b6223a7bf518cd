"""Webhooks domain."""
