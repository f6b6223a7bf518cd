"""Provider adapters. Each provider is a package (``<name>/``) that declares itself once in its
registration.py; registry.py lists them (docs/providers.md).

Each provider's package keeps payment_results.py (what its statuses mean for a payment) next to
wire.py (the statuses themselves), so the two are read together.
"""

AUTO = "auto"  # a request's provider when payorch chooses (routing)
