"""Request and response models of the users API (/v1/admin/users)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from payorch.access.roles import ROLES
from payorch.clock import isoformat
from payorch.http.listing import PageQuery, id_cursor
from payorch.pagination import Page
from payorch.users.invites import INVITE_HOURS
from payorch.users.records import User
from payorch.users.service import EMAIL_PATTERN, MAX_EMAIL_LENGTH

Role = Annotated[
    str,
    Field(
        json_schema_extra={"enum": list(ROLES)},
        description='The person\'s role (docs/access.md, "Roles").',
        examples=["developer"],
    ),
]
Status = Literal["INVITED", "ACTIVE", "DISABLED"]
INVITE_URL_HELP = (
    f"The link that sets the person's password: shown only in this answer, works once, for "
    f"{INVITE_HOURS} hours."
)


class InviteUser(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    email: Annotated[
        str,
        Field(
            max_length=MAX_EMAIL_LENGTH,
            pattern=EMAIL_PATTERN,
            description="Lowercased; once per application.",
            examples=["ana@example.com"],
        ),
    ]
    role: Role


class UpdateUser(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Role | None = None
    disabled: Annotated[
        bool | None,
        Field(description="true: the person cannot sign in and their sessions end; false: again."),
    ] = None


class UserResponse(BaseModel):
    id: str
    email: str
    role: str
    status: Status
    created_at: str
    updated_at: str
    last_signed_in_at: str | None
    invite_expires_at: str | None = Field(description="While INVITED: when the invite link stops working.")


class InvitedUser(UserResponse):
    invite_url: str = Field(description=INVITE_URL_HELP)


class UserList(BaseModel):
    items: list[UserResponse]
    next_cursor: str | None


class UserListQuery(PageQuery):
    cursor: Annotated[str | None, id_cursor("usr")] = None


def user_body(user: User) -> dict[str, object]:
    return {
        "id": user.id,
        "email": user.email,
        "role": user.role,
        "status": user.status,
        "created_at": isoformat(user.created_at),
        "updated_at": isoformat(user.updated_at),
        "last_signed_in_at": _instant(user.last_signed_in_at),
        "invite_expires_at": _instant(user.invite_expires_at),
    }


def invited_body(user: User, invite_url: str) -> dict[str, object]:
    return {**user_body(user), "invite_url": invite_url}


def user_page_body(page: Page[User]) -> dict[str, object]:
    return {"items": [user_body(user) for user in page.items], "next_cursor": page.next_cursor}


def _instant(moment: datetime | None) -> str | None:
    return isoformat(moment) if moment is not None else None
