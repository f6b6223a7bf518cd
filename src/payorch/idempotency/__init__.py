"""Idempotency-Key handling, shared by every create/change operation (see service.py)."""
