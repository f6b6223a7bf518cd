"""Provider adapters. Identifiers of the providers this build speaks."""

PROVIDER_A = "provider_a_redirect_post"  # card provider, POST redirect
PROVIDER_B = "provider_b_redirect_get"  # wallet/checkout provider, GET redirect
PROVIDER_IDS = (PROVIDER_A, PROVIDER_B)
AUTO = "auto"
