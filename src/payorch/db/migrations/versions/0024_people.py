"""People sign in as themselves (issue 38): users with roles, their recovery codes and passkeys;
sessions of a person; scopes, expiry and last use of API keys; the activity log and its heads.

Existing dashboard sessions (each made by signing in with an API key) are ended: a person signs
in again, as themselves. Existing keys keep every scope (scopes null)."""

import sqlalchemy as sa
from alembic import op

from payorch.db.types import JsonType, UtcDateTime

revision = "0024"
down_revision = "0023"


def _id(name: str = "id") -> sa.Column[str]:
    return sa.Column(name, sa.String(40), primary_key=True)


def _ref(name: str, table: str) -> sa.Column[str]:
    return sa.Column(name, sa.String(40), sa.ForeignKey(f"{table}.id"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "users",
        _id(),
        _ref("application_id", "applications"),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.Text, nullable=True),
        sa.Column("totp_secret", sa.Text, nullable=True),
        sa.Column("invite_hash", sa.String(64), nullable=True, unique=True),
        sa.Column("invite_expires_at", UtcDateTime, nullable=True),
        sa.Column("failed_sign_ins", sa.Integer, nullable=False),
        sa.Column("locked_until", UtcDateTime, nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
        sa.Column("last_signed_in_at", UtcDateTime, nullable=True),
        sa.UniqueConstraint("application_id", "email"),
    )
    op.create_index("ix_users_application_id_id", "users", ["application_id", "id"])
    op.create_index("ix_users_email", "users", ["email"])
    op.create_table(
        "user_recovery_codes",
        _id(),
        _ref("user_id", "users"),
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("used_at", UtcDateTime, nullable=True),
    )
    op.create_index("ix_user_recovery_codes_user_id", "user_recovery_codes", ["user_id"])
    op.create_table(
        "user_passkeys",
        _id(),
        _ref("user_id", "users"),
        sa.Column("credential_id", sa.String(1400), nullable=False, unique=True),
        sa.Column("public_key", sa.LargeBinary, nullable=False),
        sa.Column("sign_count", sa.Integer, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("last_used_at", UtcDateTime, nullable=True),
    )
    op.create_index("ix_user_passkeys_user_id", "user_passkeys", ["user_id"])

    op.execute("DELETE FROM dashboard_sessions")
    with op.batch_alter_table("dashboard_sessions") as batch:
        batch.alter_column("credential_id", existing_type=sa.String(40), nullable=True)
        batch.add_column(sa.Column("user_id", sa.String(40), nullable=True))
        batch.add_column(sa.Column("stage", sa.String(16), nullable=False, server_default="ACTIVE"))
        batch.add_column(sa.Column("challenge", sa.Text, nullable=True))
        batch.add_column(
            sa.Column("last_seen_at", UtcDateTime, nullable=False, server_default="2000-01-01 00:00:00")
        )
        batch.create_foreign_key("fk_dashboard_sessions_user_id_users", "users", ["user_id"], ["id"])
        batch.create_index("ix_dashboard_sessions_user_id", ["user_id"])
    with op.batch_alter_table("dashboard_sessions") as batch:
        batch.alter_column("stage", existing_type=sa.String(16), server_default=None)
        batch.alter_column("last_seen_at", existing_type=UtcDateTime, server_default=None)

    with op.batch_alter_table("api_credentials") as batch:
        batch.add_column(sa.Column("scopes", JsonType, nullable=True))
        batch.add_column(sa.Column("expires_at", UtcDateTime, nullable=True))
        batch.add_column(sa.Column("last_used_at", UtcDateTime, nullable=True))

    op.create_table(
        "activity_log",
        _id(),
        _ref("application_id", "applications"),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("at", UtcDateTime, nullable=False),
        sa.Column("actor_type", sa.String(16), nullable=False),
        sa.Column("actor_id", sa.String(64), nullable=False),
        sa.Column("actor_email", sa.String(254), nullable=True),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("resource_type", sa.String(40), nullable=False),
        sa.Column("resource_id", sa.String(64), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("origin_ip", sa.String(64), nullable=True),
        sa.Column("origin_user_agent", sa.String(512), nullable=True),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("changes", JsonType, nullable=False),
        sa.Column("previous_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.UniqueConstraint("application_id", "seq"),
    )
    op.create_index("ix_activity_log_application_id_at", "activity_log", ["application_id", "at"])
    for column in ("actor_id", "resource_id", "action"):
        op.create_index(
            f"ix_activity_log_application_id_{column}_seq", "activity_log", ["application_id", column, "seq"]
        )
    op.create_table(
        "activity_heads",
        sa.Column(
            "application_id", sa.String(40), sa.ForeignKey("applications.id"), nullable=False, unique=True
        ),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("hash", sa.Text, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("activity_heads")
    op.drop_table("activity_log")
    with op.batch_alter_table("api_credentials") as batch:
        for column in ("last_used_at", "expires_at", "scopes"):
            batch.drop_column(column)
    op.execute("DELETE FROM dashboard_sessions WHERE credential_id IS NULL")
    with op.batch_alter_table("dashboard_sessions") as batch:
        batch.drop_index("ix_dashboard_sessions_user_id")
        batch.drop_constraint("fk_dashboard_sessions_user_id_users", type_="foreignkey")
        for column in ("last_seen_at", "challenge", "stage", "user_id"):
            batch.drop_column(column)
        batch.alter_column("credential_id", existing_type=sa.String(40), nullable=False)
    op.drop_table("user_passkeys")
    op.drop_table("user_recovery_codes")
    op.drop_table("users")
