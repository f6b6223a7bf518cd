"""The roles of people and the scopes each holds: the table the docs print (docs/access.md) and
the tests read, row by row. Deny by default: a scope not listed for a role is refused to it."""

from __future__ import annotations

from typing import Final

from payorch.access.scopes import ALL_SCOPES

ROLES: Final[tuple[str, ...]] = ("owner", "admin", "developer", "operator", "finance", "viewer")

_READS: Final[frozenset[str]] = frozenset(
    {
        "payment_intents:read",
        "payment_links:read",
        "refunds:read",
        "payments:read",
        "disputes:read",
        "events:read",
        "merchant_accounts:read",
        "reconciliation:read",
        "webhooks:read",
        "connectors:read",
        "routing:read",
        "providers:read",
    }
)

ROLE_SCOPES: Final[dict[str, frozenset[str]]] = {
    "owner": ALL_SCOPES,
    # As owner; only an owner makes, demotes or removes an owner (payorch.users).
    "admin": ALL_SCOPES,
    # Keys, webhooks, connectors, routing and test payments; no money moves back (no refund,
    # capture or cancel), no exports, no people.
    "developer": _READS
    | {
        "payment_intents:write",
        "webhooks:write",
        "connectors:write",
        "routing:write",
        "api_keys:read",
        "api_keys:write",
        "simulator:write",
    },
    # Moves money: refunds, captures, cancels, payment links; resolves reconciliation findings.
    "operator": _READS
    | {
        "payment_intents:write",
        "payment_links:write",
        "cancellations:write",
        "captures:write",
        "refunds:write",
        "reconciliation:write",
    },
    # Reads everything, exports, runs reconciliation.
    "finance": _READS
    | {"exports:read", "reconciliation:write", "api_keys:read", "users:read", "activity:read"},
    "viewer": _READS,
}

# Owners and admins must sign in with a second factor; a setting extends it to everyone.
MFA_ROLES: Final[frozenset[str]] = frozenset({"owner", "admin"})


def scopes_of(role: str) -> frozenset[str]:
    """The scopes of ``role``; none for a role this table does not know (deny by default)."""
    return ROLE_SCOPES.get(role, frozenset())
