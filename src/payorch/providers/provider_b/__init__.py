"""Provider B (Checkout Pro): a wallet/checkout provider whose checkout is a GET redirect."""

PROVIDER_B = "provider_b_redirect_get"
