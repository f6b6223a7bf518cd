"""The scopes: one name per resource and verb. A key holds a list of them (none given: every
scope); a person holds their role's (payorch.access.roles). Every API operation and every
dashboard page names the one it needs (payorch.access.operations)."""

from __future__ import annotations

from typing import Final

# Scope -> what it allows, as the docs and the OpenAPI document say it.
SCOPES: Final[dict[str, str]] = {
    "payment_intents:read": "Read payment intents, their events and checkouts.",
    "payment_intents:write": "Create payment intents and their checkouts.",
    "cancellations:write": "Cancel a payment intent.",
    "captures:write": "Capture or void an authorized payment.",
    "payment_links:read": "Read payment links and the payments each took.",
    "payment_links:write": "Create and deactivate payment links.",
    "refunds:read": "Read refunds.",
    "refunds:write": "Refund a payment, in whole or in part.",
    "payments:read": "Read and search payments.",
    "disputes:read": "Read disputes.",
    "events:read": "Read the application's events (the bodies webhook deliveries send).",
    "merchant_accounts:read": "List the application's merchant accounts.",
    "exports:read": "Export payments, refunds, disputes, payment links and the activity log.",
    "reconciliation:read": "Read reconciliation runs and findings.",
    "reconciliation:write": "Run reconciliation and resolve its findings.",
    "webhooks:read": "Read webhook endpoints and their deliveries.",
    "webhooks:write": "Create, change, test and delete webhook endpoints; rotate secrets; retry deliveries.",
    "connectors:read": "Read provider connectors (never their credentials).",
    "connectors:write": "Create, change and remove provider connectors and their credentials.",
    "routing:read": "Read routing rules and their versions.",
    "routing:write": "Create and activate routing versions.",
    "providers:read": "Read the providers' health.",
    "api_keys:read": "List API keys (never the keys themselves).",
    "api_keys:write": "Create and revoke API keys.",
    "users:read": "List the application's people.",
    "users:write": "Invite people, change their roles, disable and remove them.",
    "activity:read": "Read the activity log.",
    "simulator:write": "Drive the sandbox's provider simulator.",
}

ALL_SCOPES: Final[frozenset[str]] = frozenset(SCOPES)
