"""The users domain's records. A User never carries its password's hash, TOTP secret or invite
hash: those stay in the repository (``find_by_email_for_sign_in`` hands a hash to sign-in)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

UserStatus = Literal["INVITED", "ACTIVE", "DISABLED"]

INVITED: Final = "INVITED"
ACTIVE: Final = "ACTIVE"
DISABLED: Final = "DISABLED"

OWNER: Final = "owner"


@dataclass(frozen=True, slots=True)
class User:
    id: str  # usr_...
    application_id: str
    email: str  # lowercased
    role: str  # payorch.access.roles.ROLES
    status: str  # INVITED | ACTIVE | DISABLED
    failed_sign_ins: int
    locked_until: datetime | None
    created_at: datetime
    updated_at: datetime
    last_signed_in_at: datetime | None
    invite_expires_at: datetime | None  # while INVITED: when the link stops working
