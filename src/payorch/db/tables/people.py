"""The people who sign in to an application (owned by payorch.users): their accounts, one-time
recovery codes and passkeys. Secrets are stored only as hashes (password, invite, recovery
codes) or encrypted (the TOTP secret); a passkey's public key is not a secret."""

from sqlalchemy import BigInteger, Column, Index, Integer, LargeBinary, String, Table, Text, UniqueConstraint

from payorch.db.tables.base import id_column, metadata, reference, timestamp
from payorch.db.types import UtcDateTime

users = Table(
    "users",
    metadata,
    id_column(),  # usr_...
    reference("application_id", "applications"),
    Column("email", String(254), nullable=False),  # lowercased
    Column("role", String(16), nullable=False),  # owner | admin | developer | operator | finance | viewer
    Column("status", String(16), nullable=False),  # INVITED | ACTIVE | DISABLED
    Column("password_hash", Text, nullable=True),  # argon2id, set when the invite is accepted
    Column("totp_secret", Text, nullable=True),  # encrypted (payorch.crypto), set once confirmed
    # The time step (unix time // 30) of the last TOTP code accepted: a code is good once.
    Column("totp_last_step", BigInteger, nullable=True),
    Column("invite_hash", String(64), nullable=True, unique=True),  # SHA-256 of the invite token
    Column("invite_expires_at", UtcDateTime, nullable=True),
    Column("failed_sign_ins", Integer, nullable=False),  # since the last success or lockout
    Column("locked_until", UtcDateTime, nullable=True),
    timestamp("created_at"),
    timestamp("updated_at"),
    timestamp("last_signed_in_at", nullable=True),
    UniqueConstraint("application_id", "email"),
    Index("ix_users_application_id_id", "application_id", "id"),
    Index("ix_users_email", "email"),
)

user_recovery_codes = Table(
    "user_recovery_codes",
    metadata,
    id_column(),
    reference("user_id", "users", index=True),
    Column("code_hash", String(64), nullable=False),  # SHA-256 of the code
    timestamp("created_at"),
    timestamp("used_at", nullable=True),
)

user_passkeys = Table(
    "user_passkeys",
    metadata,
    id_column(),  # pk_...
    reference("user_id", "users", index=True),
    Column("credential_id", String(1400), nullable=False, unique=True),  # base64url, WebAuthn's id
    Column("public_key", LargeBinary, nullable=False),  # COSE key
    Column("sign_count", Integer, nullable=False),
    Column("name", String(100), nullable=False),
    timestamp("created_at"),
    timestamp("last_used_at", nullable=True),
)
