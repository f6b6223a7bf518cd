"""Applications: the tenant. Each has an environment, merchant accounts and API keys."""
