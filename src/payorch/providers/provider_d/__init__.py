"""Provider D: Adyen Hosted Checkout (sessions, ``mode: hosted``, a GET redirect)."""

PROVIDER_D = "provider_d_redirect_get"
