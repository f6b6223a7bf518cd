"""The dashboard's sign-in sessions (owned by payorch.dashboard)."""

from sqlalchemy import Column, ForeignKey, String, Table, Text

from payorch.db.tables.base import metadata, reference, timestamp
from payorch.db.types import UtcDateTime

dashboard_sessions = Table(
    "dashboard_sessions",
    metadata,
    # SHA-256 hex of the cookie's random token: a stolen database row cannot be used as a cookie.
    Column("id", String(64), primary_key=True),
    reference("application_id", "applications"),
    # The key signed in with (SANDBOX only, behind a setting): revoking it ends its sessions
    # (the lookup reads its revoked_at). Null for a person's session.
    Column("credential_id", String(40), ForeignKey("api_credentials.id"), nullable=True, index=True),
    # The person signed in; a role change, disabling or removal deletes their sessions.
    Column("user_id", String(40), ForeignKey("users.id"), nullable=True, index=True),
    # PASSWORD: the password matched, a second factor is next; ACTIVE: signed in.
    Column("stage", String(16), nullable=False),
    Column("challenge", Text, nullable=True),  # a pending WebAuthn challenge (base64url)
    timestamp("created_at"),
    timestamp("last_seen_at"),  # idle expiry
    Column("expires_at", UtcDateTime, nullable=False, index=True),  # absolute expiry
)
