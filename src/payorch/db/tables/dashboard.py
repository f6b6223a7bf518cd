"""The dashboard's sign-in sessions (owned by payorch.dashboard)."""

from sqlalchemy import Column, String, Table

from payorch.db.tables.base import metadata, reference, timestamp
from payorch.db.types import UtcDateTime

dashboard_sessions = Table(
    "dashboard_sessions",
    metadata,
    # SHA-256 hex of the cookie's random token: a stolen database row cannot be used as a cookie.
    Column("id", String(64), primary_key=True),
    reference("application_id", "applications"),
    # The key signed in with: revoking it ends its sessions (the lookup reads its revoked_at).
    reference("credential_id", "api_credentials", index=True),
    timestamp("created_at"),
    Column("expires_at", UtcDateTime, nullable=False, index=True),
)
