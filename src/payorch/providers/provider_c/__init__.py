"""provider_c_redirect_get: Stripe Checkout (hosted page, GET redirect), in every mode."""

PROVIDER_C = "provider_c_redirect_get"
