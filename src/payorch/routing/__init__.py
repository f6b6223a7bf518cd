"""Routing: which provider takes a checkout, and why (docs/routing.md).

The one owner of the decision: the create's gate (gate.py), the candidates, their order, currency
support and health (decide.py, attempts.py), a merchant's versioned rules (program.py, checks.py,
service.py) and the success-rate strategy's port (strategy.py). Nothing else orders connectors.
"""
