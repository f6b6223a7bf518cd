"""Provider A (Webpay Plus REST): a card provider whose checkout is a POST redirect."""

PROVIDER_A = "provider_a_redirect_post"
