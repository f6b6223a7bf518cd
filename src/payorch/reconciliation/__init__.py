"""Reconciliation: each provider's records of a day compared with payorch's (docs/reconciliation.md)."""
