"""The dashboard's pages and forms, each with the scope a person (or a key's session) needs for
it: the one table payorch.dashboard.web consults before any page is drawn or any form is read.

A route that is not in this table is refused to everyone (deny by default), and
tests/dashboard/test_page_scopes.py names it. ``PUBLIC`` marks the few that need no scope:
signing in and out, and the stylesheet and script every page loads.
"""

from __future__ import annotations

from typing import Final

PUBLIC: Final = ""  # needs no scope (the route itself decides whether a session is needed)

# (method, path under /dashboard as the route declares it) -> the scope it needs.
PAGES: Final[dict[tuple[str, str], str]] = {
    ("GET", ""): "payment_intents:read",  # the root: to the overview
    ("GET", "/sign-in"): PUBLIC,
    ("POST", "/sign-in"): PUBLIC,
    ("POST", "/sign-out"): PUBLIC,
    # Signing in's further steps: a PASSWORD-stage session (or an invite's token) is checked by
    # the route itself (payorch.dashboard.second_factor, signin).
    ("GET", "/sign-in/second-factor"): PUBLIC,
    ("POST", "/sign-in/second-factor"): PUBLIC,
    ("POST", "/sign-in/second-factor/passkey-options"): PUBLIC,
    ("POST", "/sign-in/second-factor/passkey"): PUBLIC,
    ("POST", "/sign-in/cancel"): PUBLIC,
    ("GET", "/sign-in/enroll"): PUBLIC,
    ("POST", "/sign-in/enroll"): PUBLIC,
    ("GET", "/sign-in/enroll/passkey"): PUBLIC,
    ("POST", "/sign-in/enroll/passkey-options"): PUBLIC,
    ("POST", "/sign-in/enroll/passkey"): PUBLIC,
    ("GET", "/invite/{token}"): PUBLIC,
    ("POST", "/invite/{token}"): PUBLIC,
    ("GET", "/recovery-codes"): PUBLIC,  # one's own codes: any signed-in person
    ("POST", "/recovery-codes"): PUBLIC,
    ("GET", "/assets/{name}"): PUBLIC,
    ("GET", "/{rest}"): PUBLIC,  # the 404 page of an unknown address
    ("POST", "/{rest}"): PUBLIC,
    ("GET", "/overview"): "payment_intents:read",
    ("GET", "/payments"): "payments:read",
    ("GET", "/payments/{intent_id}"): "payment_intents:read",
    ("POST", "/payments/{intent_id}/refunds"): "refunds:write",
    ("POST", "/payments/{intent_id}/capture"): "captures:write",
    ("POST", "/payments/{intent_id}/void"): "captures:write",
    ("GET", "/activity"): "activity:read",
    ("GET", "/exports"): "exports:read",
    ("GET", "/exports/download"): "exports:read",
    ("GET", "/reconciliation"): "reconciliation:read",
    ("POST", "/reconciliation"): "reconciliation:write",
    ("POST", "/reconciliation/findings/{finding_id}/resolve"): "reconciliation:write",
    ("GET", "/webhooks"): "webhooks:read",
    ("POST", "/webhooks"): "webhooks:write",
    ("GET", "/webhooks/{endpoint_id}"): "webhooks:read",
    ("POST", "/webhooks/{endpoint_id}"): "webhooks:write",
    ("POST", "/webhooks/{endpoint_id}/recover"): "webhooks:write",
    ("POST", "/webhooks/{endpoint_id}/delete"): "webhooks:write",
    ("POST", "/webhooks/{endpoint_id}/test"): "webhooks:write",
    ("POST", "/webhooks/{endpoint_id}/rotate"): "webhooks:write",
    ("GET", "/webhooks/deliveries"): "webhooks:read",
    ("GET", "/webhooks/deliveries/{endpoint_id}/{delivery_id}"): "webhooks:read",
    ("POST", "/webhooks/deliveries/{endpoint_id}/{delivery_id}/retry"): "webhooks:write",
    ("GET", "/providers"): "connectors:read",
    ("POST", "/providers/{merchant_id}/connectors"): "connectors:write",
    ("POST", "/providers/{merchant_id}/{connector_id}"): "connectors:write",
    ("POST", "/providers/{merchant_id}/{connector_id}/remove"): "connectors:write",
    ("GET", "/routing"): "routing:read",
    ("GET", "/routing/{merchant_id}"): "routing:read",
    ("POST", "/routing/{merchant_id}"): "routing:write",
    ("GET", "/api-keys"): "api_keys:read",
    ("POST", "/api-keys"): "api_keys:write",
    ("POST", "/api-keys/{credential_id}/revoke"): "api_keys:write",
    ("GET", "/links"): "payment_links:read",
    ("POST", "/links"): "payment_links:write",
    ("GET", "/links/{link_id}"): "payment_links:read",
    ("POST", "/links/{link_id}/deactivate"): "payment_links:write",
    ("GET", "/sandbox"): "payment_intents:write",  # the test payment's form
    ("POST", "/sandbox"): "payment_intents:write",
    ("GET", "/sandbox/returned"): "payment_intents:read",
    ("GET", "/users"): "users:read",
    ("POST", "/users"): "users:write",
    ("POST", "/users/{user_id}/role"): "users:write",
    ("POST", "/users/{user_id}/disable"): "users:write",
    ("POST", "/users/{user_id}/enable"): "users:write",
    ("POST", "/users/{user_id}/remove"): "users:write",
}

# What a scope lets a person do, as the refusal says it: "Your role (viewer) cannot <this>."
ACTIONS: Final[dict[str, str]] = {
    "payment_intents:read": "see payment intents",
    "payment_intents:write": "create payment intents or test payments",
    "payment_links:read": "see payment links",
    "payment_links:write": "create or deactivate payment links",
    "cancellations:write": "cancel payment intents",
    "captures:write": "capture or void payments",
    "refunds:read": "see refunds",
    "refunds:write": "refund payments",
    "payments:read": "see or search payments",
    "disputes:read": "see disputes",
    "exports:read": "export data",
    "reconciliation:read": "see reconciliation",
    "reconciliation:write": "run reconciliation or resolve its findings",
    "webhooks:read": "see webhook endpoints or their deliveries",
    "webhooks:write": "change webhook endpoints or retry their deliveries",
    "connectors:read": "see provider connectors",
    "connectors:write": "change provider connectors",
    "routing:read": "see routing",
    "routing:write": "change routing",
    "providers:read": "see the providers' health",
    "api_keys:read": "see API keys",
    "api_keys:write": "create or revoke API keys",
    "users:read": "see the application's people",
    "users:write": "invite people or change their roles",
    "activity:read": "see the activity log",
    "simulator:write": "drive the sandbox's simulator",
    "events:read": "read the application's events",
    "merchant_accounts:read": "list the merchant accounts",
}

REFUSED: Final = "REFUSED"  # a route missing from PAGES: nobody may use it


def scope_of(method: str, path: str) -> str:
    """The scope the route (``method``, ``path`` under /dashboard) needs: PUBLIC, a scope, or
    REFUSED when the table does not list it (deny by default)."""
    return PAGES.get((method, path), REFUSED)
