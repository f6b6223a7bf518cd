"""Observability domain."""
