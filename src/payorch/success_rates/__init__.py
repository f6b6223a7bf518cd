"""Recent authorization rates per merchant, provider and currency, and routing's success-rate
ranking over them (docs/routing.md, "Default: success rate")."""
