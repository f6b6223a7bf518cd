"""The settings of people and their sign-in (PAYORCH_MAX_USERS, PAYORCH_DASHBOARD_*,
PAYORCH_SIGN_IN_*, PAYORCH_REQUIRE_MFA_FOR_ALL, PAYORCH_ACTIVITY_RETENTION_DAYS): a part of
``payorch.config.Settings``, which inherits them, kept apart so each file stays small
(docs/access.md). Every setting is still read, described and checked through ``Settings``.
"""

from __future__ import annotations

from pydantic import Field

from payorch.config_database import DatabaseSettings


class AccessSettings(DatabaseSettings):
    """Who signs in, how, for how long, and how long their actions are kept."""

    activity_retention_days: int = Field(
        400,
        gt=0,
        description=(
            "Activity log entries older than this are deleted from the start of each "
            "application's chain by the worker (job activity-retention), which first appends an "
            "activity.retention_applied entry naming the cut, so the chain still verifies."
        ),
    )
    max_users: int = Field(
        100,
        ge=1,
        description=(
            "People (users, whatever their status) per application: one more invite is refused "
            "409 LIMIT_EXCEEDED (remove someone first)."
        ),
    )
    sandbox_owner_email: str = Field(
        "owner@sandbox.localhost",
        description=(
            "The email of the sandbox application's owner that `payorch serve` (`make run`) "
            "invites on a fresh database; the sign-in link is printed once, at that start."
        ),
    )
    dashboard_session_seconds: int = Field(
        43200,
        ge=60,
        description=(
            "A dashboard sign-in lasts at most this long (12 hours), however active; then the "
            "browser returns to sign-in."
        ),
    )
    dashboard_idle_seconds: int = Field(
        900,
        ge=60,
        description=(
            "A dashboard session unused this long (15 minutes) ends; a page view counts as use "
            "(noted at most once a minute per session)."
        ),
    )
    dashboard_key_sign_in: bool = Field(
        False,
        description=(
            "Whether a SANDBOX application's API key signs in to the dashboard (with every "
            "power of the key). PRODUCTION applications never do: their people sign in."
        ),
    )
    require_mfa_for_all: bool = Field(
        False,
        description=(
            "Every person signs in with a second factor (TOTP or a passkey); otherwise only "
            "owners and admins must (the others may enroll one)."
        ),
    )
    sign_in_max_failures: int = Field(
        5,
        ge=1,
        description=("Failed sign-ins (password or second factor) in a row that lock a person's account."),
    )
    sign_in_lock_seconds: int = Field(
        900, ge=1, description="How long a locked account refuses every sign-in (15 minutes)."
    )
