"""Every operation of the API and the scope it needs: the one table the API consults (a key's
or a person's scopes, payorch.http.deps.authenticate), the OpenAPI document states
(payorch.http.openapi_terms) and the tests read, operation by operation.

Deny by default: an operation that authenticates and is not in SCOPED is refused to every
caller (403 FORBIDDEN), and tests/access/test_operations.py fails naming it. The operations
that take no key (a provider's notification, the buyer's return, health, metrics, the API
reference) are listed too, in OPEN, each with why it takes none; so are the path prefixes
served by something other than the API (OPEN_PREFIXES).
"""

from __future__ import annotations

from typing import Final

from payorch.access.scopes import SCOPES

_MERCHANT = "/v1/admin/merchant-accounts/{merchant_id}"
_ENDPOINT = "/v1/admin/webhook-endpoints/{endpoint_id}"

# (method, route path as the router declares it) -> the scope it needs.
SCOPED: Final[dict[tuple[str, str], str]] = {
    # Payment intents and their checkouts.
    ("POST", "/v1/payment-intents"): "payment_intents:write",
    ("GET", "/v1/payment-intents"): "payment_intents:read",
    ("GET", "/v1/payment-intents/{payment_intent_id}"): "payment_intents:read",
    ("POST", "/v1/payment-intents/{payment_intent_id}/checkout"): "payment_intents:write",
    ("POST", "/v1/payment-intents/{payment_intent_id}/cancel"): "cancellations:write",
    # Payment links (their buyer pages under /pay/ take no key: OPEN_PREFIXES).
    ("POST", "/v1/payment-links"): "payment_links:write",
    ("GET", "/v1/payment-links"): "payment_links:read",
    ("GET", "/v1/payment-links/{payment_link_id}"): "payment_links:read",
    ("POST", "/v1/payment-links/{payment_link_id}/deactivate"): "payment_links:write",
    # Payments and refunds.
    ("GET", "/v1/payments"): "payments:read",
    ("GET", "/v1/payments/{payment_id}"): "payments:read",
    ("POST", "/v1/payments/{payment_id}/refunds"): "refunds:write",
    ("POST", "/v1/payments/{payment_id}/capture"): "captures:write",
    ("POST", "/v1/payments/{payment_id}/void"): "captures:write",
    ("GET", "/v1/payments/{payment_id}/refunds"): "refunds:read",
    # Reconciliation.
    ("POST", "/v1/reports/reconciliation"): "reconciliation:write",
    ("GET", "/v1/reports/reconciliation"): "reconciliation:read",
    ("POST", "/v1/reports/reconciliation/findings/{finding_id}/resolve"): "reconciliation:write",
    # Exports.
    ("GET", "/v1/exports/payments"): "exports:read",
    ("GET", "/v1/exports/refunds"): "exports:read",
    ("GET", "/v1/exports/disputes"): "exports:read",
    ("GET", "/v1/exports/balances"): "exports:read",
    ("GET", "/v1/exports/payment_links"): "exports:read",
    # The activity log as a file: its own scope, as its list (a key for accounting exports
    # does not read who did what).
    ("GET", "/v1/exports/activity"): "activity:read",
    # Merchant accounts, their connectors and routing.
    ("GET", "/v1/admin/merchant-accounts"): "merchant_accounts:read",
    ("GET", f"{_MERCHANT}/connectors"): "connectors:read",
    ("POST", f"{_MERCHANT}/connectors"): "connectors:write",
    ("PATCH", f"{_MERCHANT}/connectors/{{config_id}}"): "connectors:write",
    ("GET", f"{_MERCHANT}/routing"): "routing:read",
    ("PUT", f"{_MERCHANT}/routing"): "routing:write",
    ("GET", f"{_MERCHANT}/routing/versions"): "routing:read",
    ("POST", f"{_MERCHANT}/routing/versions"): "routing:write",
    ("POST", f"{_MERCHANT}/routing/versions/{{number}}/activate"): "routing:write",
    # A dry run: it changes nothing.
    ("POST", f"{_MERCHANT}/routing/evaluate"): "routing:read",
    # Webhook endpoints, their deliveries and the events they carry.
    ("POST", "/v1/admin/webhook-endpoints"): "webhooks:write",
    ("GET", "/v1/admin/webhook-endpoints"): "webhooks:read",
    ("GET", _ENDPOINT): "webhooks:read",
    ("PATCH", _ENDPOINT): "webhooks:write",
    ("DELETE", _ENDPOINT): "webhooks:write",
    ("GET", f"{_ENDPOINT}/deliveries"): "webhooks:read",
    ("GET", "/v1/admin/webhook-deliveries"): "webhooks:read",
    ("GET", f"{_ENDPOINT}/deliveries/{{delivery_id}}"): "webhooks:read",
    ("POST", f"{_ENDPOINT}/deliveries/{{delivery_id}}/retry"): "webhooks:write",
    ("POST", f"{_ENDPOINT}/recover"): "webhooks:write",
    ("POST", f"{_ENDPOINT}/test"): "webhooks:write",
    ("POST", f"{_ENDPOINT}/secret/rotate"): "webhooks:write",
    ("GET", "/v1/events"): "events:read",
    # API keys.
    ("POST", "/v1/admin/api-credentials"): "api_keys:write",
    ("GET", "/v1/admin/api-credentials"): "api_keys:read",
    ("DELETE", "/v1/admin/api-credentials/{credential_id}"): "api_keys:write",
    # People (payorch.users; docs/access.md, "People").
    ("POST", "/v1/admin/users"): "users:write",
    ("GET", "/v1/admin/users"): "users:read",
    ("GET", "/v1/admin/users/{user_id}"): "users:read",
    ("PATCH", "/v1/admin/users/{user_id}"): "users:write",
    ("DELETE", "/v1/admin/users/{user_id}"): "users:write",
    ("POST", "/v1/admin/users/{user_id}/invite"): "users:write",
    # The activity log.
    ("GET", "/v1/admin/activity"): "activity:read",
}

# Path prefixes whose every operation needs one scope.
SCOPED_PREFIXES: Final[dict[str, str]] = {
    # The sandbox's simulator controls, each provider's own among them (a SANDBOX key besides).
    "/simulator/controls/": "simulator:write",
}

# Operations that take no key, and why.
_PROVIDER = "a provider's call: it carries the provider's signature, not a key of ours"
_BUYER = "the buyer's browser coming back from the provider's page"
_REFERENCE = "the API reference, public"
OPEN: Final[dict[tuple[str, str], str]] = {
    ("GET", "/v1/checkout-returns/{provider}/{payment_intent_id}"): _BUYER,
    ("POST", "/v1/checkout-returns/{provider}/{payment_intent_id}"): _BUYER,
    ("POST", "/v1/provider-notifications/{provider}/{connector_id}"): _PROVIDER,
    ("GET", "/healthz"): "liveness, for the orchestrator",
    ("GET", "/readyz"): "readiness, for the orchestrator",
    ("GET", "/metrics"): "Prometheus' scrape (keep it off the public network: docs/operations.md)",
    ("GET", "/openapi.json"): _REFERENCE,
    ("GET", "/docs"): _REFERENCE,
    ("GET", "/redoc"): _REFERENCE,
    ("GET", "/docs-assets/redoc.standalone.js"): _REFERENCE,
}

# Path prefixes whose every route takes no key of the API's, and why.
OPEN_PREFIXES: Final[dict[str, str]] = {
    "/docs-assets/": _REFERENCE,
    # Each simulated provider's own API (its own credentials) and the buyer's pages there; the
    # controls under /simulator/controls/ are the API's (SCOPED_PREFIXES, consulted first).
    "/simulator/": "a simulated provider's own API or the buyer's page at it",
    "/pay/": "a payment link's buyer page: public by design; only its Pay makes anything, "
    "limited per link and per address (payorch.links.buyer_page)",
    "/checkout-retry/": "the buyer's second chance after a decline: public by design; its one button "
    "starts at most one checkout per declined one (payorch.checkouts.retry_page)",
    "/dashboard": "the dashboard: a person's session, each page checks the role's scope (payorch.dashboard)",
}


def required_scope(method: str, path: str) -> str | None:
    """The scope of the operation ``method`` ``path`` (the route's declared path); None when
    the table does not list it: refuse it (deny by default)."""
    scope = SCOPED.get((method, path))
    if scope is None:
        for prefix, prefixed in SCOPED_PREFIXES.items():
            if path.startswith(prefix):
                return prefixed
    return scope


def is_open(method: str, path: str) -> bool:
    """Whether the table lists ``method`` ``path`` as taking no key."""
    if required_scope(method, path) is not None:
        return False
    return (method, path) in OPEN or path.startswith(tuple(OPEN_PREFIXES))


def unknown_scopes() -> list[str]:
    """Scopes the table names that payorch.access.scopes does not (a test keeps this empty)."""
    named = {*SCOPED.values(), *SCOPED_PREFIXES.values()}
    return sorted(scope for scope in named if scope not in SCOPES)
