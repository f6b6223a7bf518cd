"""Provider adapters. Identifiers of the providers this build speaks.

Each provider's package keeps payment_results.py (what its statuses mean for a payment) next to
wire.py (the statuses themselves), so the two are read together.
"""

PROVIDER_A = "provider_a_redirect_post"  # card provider, POST redirect
PROVIDER_B = "provider_b_redirect_get"  # wallet/checkout provider, GET redirect
PROVIDER_IDS = (PROVIDER_A, PROVIDER_B)
AUTO = "auto"
# What a request may name as its provider: documented as this enum, checked in the same words.
PROVIDER_CHOICES = (AUTO, *PROVIDER_IDS)
