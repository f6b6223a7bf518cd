"""People of an application: invite, accept an invite, list, change role, disable or enable,
remove; and what sign-in asks (the accounts of an email, their password hashes).

Rules (docs/access.md, "People"):
- an email is validated and lowercased, once per application (409 INVALID_STATE otherwise);
- at most ``limit`` users per application (PAYORCH_MAX_USERS, 409 LIMIT_EXCEEDED);
- the last ACTIVE owner cannot be removed, demoted or disabled (409 INVALID_STATE): the
  application's active owners are locked (SELECT ... FOR UPDATE) before any such change, so two
  demotions at once take turns and the second sees the first;
- only an owner (a person whose role is owner) or the operator's command line makes someone
  owner or changes, disables or removes an owner: an admin, or an API key, gets 403 FORBIDDEN;
- a role change, disabling or removal ends that person's dashboard sessions in the same
  transaction;
- each change writes its activity entry (payorch.activity) in the same transaction, last; never
  a token or a password.

Every function runs in the caller's transaction (``conn``) and never commits.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.access.roles import ROLES
from payorch.activity import service as activity
from payorch.activity.records import Actor, Change
from payorch.auth.service import OPERATOR, Caller
from payorch.clock import Clock
from payorch.dashboard import repository as dashboard_sessions
from payorch.errors import Forbidden, InvalidState, ResourceNotFound, ValidationFailed
from payorch.ids import new_id
from payorch.jsontypes import JsonObject
from payorch.limits import refuse_at_cap
from payorch.pagination import Page, page_of
from payorch.users import invites, passwords, repository
from payorch.users.records import ACTIVE, DISABLED, INVITED, OWNER, User

MAX_EMAIL_LENGTH: Final = 254
# One @, a local part of 1 to 64 characters, a domain of dot-separated labels; no space, control
# character or @ anywhere: the rest is the mail server's word. The API's schema states the same
# pattern (payorch.users.schemas), so what the document admits is what this admits.
_NOT_IN_EMAIL: Final = r"@\x00-\x20\x7f-\xa0"
EMAIL_PATTERN: Final = rf"^[^{_NOT_IN_EMAIL}]{{1,64}}@(?:[^.{_NOT_IN_EMAIL}]+\.)+[^.{_NOT_IN_EMAIL}]+$"
_EMAIL: Final = re.compile(EMAIL_PATTERN)


def normalized_email(email: str, field: str = "email") -> str:
    """``email`` lowercased; 400 VALIDATION_ERROR naming ``field`` if it is not one."""
    if len(email) > MAX_EMAIL_LENGTH:
        raise ValidationFailed.field(field, f"must be at most {MAX_EMAIL_LENGTH} characters")
    if not _EMAIL.fullmatch(email):
        raise ValidationFailed.field(field, "must be an email address such as ana@example.com")
    return email.lower()


def checked_role(role: str, field: str = "role") -> str:
    if role not in ROLES:
        raise ValidationFailed.field(field, f"must be one of {', '.join(ROLES)}")
    return role


# -- invites ------------------------------------------------------------------------------------


async def invite(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    email: str,
    role: str,
    *,
    limit: int,
) -> tuple[User, str]:
    """A new INVITED user and the token of their invite link (shown once: only its hash is
    kept). ``limit``: PAYORCH_MAX_USERS."""
    email = normalized_email(email)
    role = checked_role(role)
    if role == OWNER:
        await _refuse_unless_owner(conn, caller, "make someone owner")
    await refuse_at_cap(
        conn,
        caller.application_id,
        repository.count_users,
        limit=limit,
        what="users",
        remedy="Remove someone who no longer needs access, then invite.",
    )
    existing = await repository.get_by_email(conn, caller.application_id, email)
    if existing is not None:
        raise InvalidState(
            existing.status,
            f"{email} is already a user of this application ({existing.id}).",
            allowed=(),
        )
    now = clock.now()
    token = invites.new_token()
    user = User(
        id=new_id("usr"),
        application_id=caller.application_id,
        email=email,
        role=role,
        status=INVITED,
        failed_sign_ins=0,
        locked_until=None,
        created_at=now,
        updated_at=now,
        last_signed_in_at=None,
        invite_expires_at=invites.expiry(now),
    )
    await repository.insert_user(conn, user, invite_hash=invites.hash_of(token), password_hash=None)
    await _record(conn, clock, caller, "user.invited", user, {"email": email, "role": role})
    return user, token


async def renew_invite(conn: AsyncConnection, clock: Clock, caller: Caller, user_id: str) -> tuple[User, str]:
    """A new invite link for a user still INVITED (the old one stops working); 409 otherwise."""
    user = await get(conn, caller, user_id)
    if user.role == OWNER:
        await _refuse_unless_owner(conn, caller, "invite an owner")
    if user.status != INVITED:
        raise InvalidState(user.status, "Only an invited user gets a new invite link.", allowed=(INVITED,))
    now = clock.now()
    token = invites.new_token()
    expires = invites.expiry(now)
    await repository.set_invite(conn, user.application_id, user.id, invites.hash_of(token), expires, now)
    await _record(conn, clock, caller, "user.invited", user, {"renewed": True})
    return await _fresh(conn, user), token


async def find_invite(conn: AsyncConnection, clock: Clock, token: str) -> User | None:
    """The INVITED user whose link this is, if it still works (unused, unexpired)."""
    user = await repository.get_by_invite(conn, invites.hash_of(token))
    if user is None or user.status != INVITED:
        return None
    if user.invite_expires_at is None or user.invite_expires_at <= clock.now():
        return None
    return user


async def accept_invite(conn: AsyncConnection, clock: Clock, token: str, password: str) -> User:
    """Sets the password (checked: 400 VALIDATION_ERROR naming "password") and makes the user
    ACTIVE; the link then stops working. 404 RESOURCE_NOT_FOUND for a link unknown, used or
    expired (one answer for the three: the page says to ask for a new link)."""
    passwords.check(password)
    user = await find_invite(conn, clock, token)
    if user is None:
        raise ResourceNotFound("This invite link is unknown, already used or expired; ask for a new one.")
    now = clock.now()
    accepted = await repository.accept_invite(
        conn, user.id, invites.hash_of(token), passwords.hash_password(password), now
    )
    if not accepted:  # accepted by a concurrent request in the meantime
        raise ResourceNotFound("This invite link is unknown, already used or expired; ask for a new one.")
    await activity.record(
        conn,
        clock,
        Change(
            application_id=user.application_id,
            actor=Actor("user", user.id, user.email),
            action="user.invite_accepted",
            resource_type="user",
            resource_id=user.id,
        ),
    )
    return await _fresh(conn, user)


# -- reading ------------------------------------------------------------------------------------


async def find(conn: AsyncConnection, application_id: str, user_id: str) -> User | None:
    return await repository.get_user(conn, application_id, user_id)


async def find_by_email(conn: AsyncConnection, application_id: str, email: str) -> User | None:
    return await repository.get_by_email(conn, application_id, email.lower())


async def get(conn: AsyncConnection, caller: Caller, user_id: str) -> User:
    """The caller's application's user; 404 RESOURCE_NOT_FOUND otherwise."""
    user = await repository.get_user(conn, caller.application_id, user_id)
    if user is None:
        raise ResourceNotFound(f"No user {user_id}.")
    return user


async def list_users(conn: AsyncConnection, caller: Caller, cursor: str | None, limit: int) -> Page[User]:
    """The application's users, newest first."""
    found = await repository.list_users(conn, caller.application_id, before=cursor, limit=limit + 1)
    return page_of(found, limit, lambda user: user.id)


# -- changes ------------------------------------------------------------------------------------


async def set_role(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    user_id: str,
    role: str,
) -> User:
    """Change the user's role (the same role: nothing changes, no entry). Ends their sessions."""
    role = checked_role(role)
    owners = await repository.lock_active_owners(conn, caller.application_id)
    user = await get(conn, caller, user_id)
    if user.role == role:
        return user
    if OWNER in (user.role, role):
        await _refuse_unless_owner(conn, caller, "make someone owner or change an owner's role")
    if user.id in owners and len(owners) <= 1:
        raise _last_owner("demoted")
    now = clock.now()
    await repository.set_role(conn, user.application_id, user.id, role, now)
    await dashboard_sessions.delete_sessions_of_user(conn, user.id)
    changes: JsonObject = {"role": {"from": user.role, "to": role}}
    await _record(conn, clock, caller, "user.role_changed", user, changes)
    return await _fresh(conn, user)


async def set_disabled(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    user_id: str,
    disabled: bool,
) -> User:
    """Disable an ACTIVE user (their sessions end, they cannot sign in) or enable a DISABLED one;
    asking for the state the user is in changes nothing. An INVITED user is removed instead
    (409)."""
    owners = await repository.lock_active_owners(conn, caller.application_id)
    user = await get(conn, caller, user_id)
    target = DISABLED if disabled else ACTIVE
    if user.status == target:
        return user
    if user.status == INVITED:
        raise InvalidState(
            INVITED,
            "An invited user has not signed in yet: remove them instead (DELETE).",
            allowed=(ACTIVE, DISABLED),
        )
    if user.role == OWNER:
        await _refuse_unless_owner(conn, caller, "disable or enable an owner")
    if disabled and user.id in owners and len(owners) <= 1:
        raise _last_owner("disabled")
    now = clock.now()
    await repository.set_status(conn, user.application_id, user.id, target, now)
    if disabled:
        await dashboard_sessions.delete_sessions_of_user(conn, user.id)
    action = "user.disabled" if disabled else "user.enabled"
    changes: JsonObject = {"status": {"from": user.status, "to": target}}
    await _record(conn, clock, caller, action, user, changes)
    return await _fresh(conn, user)


async def disable(conn: AsyncConnection, clock: Clock, caller: Caller, user_id: str) -> User:
    return await set_disabled(conn, clock, caller, user_id, True)


async def enable(conn: AsyncConnection, clock: Clock, caller: Caller, user_id: str) -> User:
    return await set_disabled(conn, clock, caller, user_id, False)


async def remove(conn: AsyncConnection, clock: Clock, caller: Caller, user_id: str) -> User:
    """Delete the user, their sessions, recovery codes and passkeys; returns them as they were.
    Their activity entries stay (with their id and email)."""
    owners = await repository.lock_active_owners(conn, caller.application_id)
    user = await get(conn, caller, user_id)
    if user.role == OWNER:
        await _refuse_unless_owner(conn, caller, "remove an owner")
    if user.id in owners and len(owners) <= 1:
        raise _last_owner("removed")
    await dashboard_sessions.delete_sessions_of_user(conn, user.id)
    await repository.delete_user(conn, user.application_id, user.id)
    changes: JsonObject = {"email": user.email, "role": user.role}
    await _record(conn, clock, caller, "user.removed", user, changes)
    return user


# -- sign-in's questions ------------------------------------------------------------------------


async def find_by_email_for_sign_in(conn: AsyncConnection, email: str) -> list[tuple[User, str]]:
    """Every account of ``email`` that has a password (ACTIVE or DISABLED; an email may belong
    to several applications), oldest first, each with its argon2 hash: for the sign-in flow
    only (passwords.verify), never for an answer."""
    return await repository.sign_in_candidates(conn, email.lower())


async def note_failed_sign_in(
    conn: AsyncConnection, user: User, *, failures: int, locked_until: datetime | None
) -> None:
    """Store the count of failed sign-ins and, when it reached the limit, the lock's end."""
    await repository.note_failed_sign_in(conn, user.id, failures, locked_until)


async def note_signed_in(
    conn: AsyncConnection,
    clock: Clock,
    user: User,
    *,
    password: str | None = None,
    password_hash: str | None = None,
) -> None:
    """A successful sign-in: the failures are forgotten, last_signed_in_at set; the password is
    re-hashed when its hash was made with older parameters (give both)."""
    now = clock.now()
    await repository.note_signed_in(conn, user.id, now)
    if password is not None and password_hash is not None and passwords.needs_rehash(password_hash):
        await repository.set_password_hash(conn, user.id, passwords.hash_password(password), now)


# -- helpers ------------------------------------------------------------------------------------


async def _refuse_unless_owner(conn: AsyncConnection, caller: Caller, what: str) -> None:
    """Only an ACTIVE owner (as stored now, not as when they signed in) or the operator's
    command line may ``what``."""
    if caller.user_id is None:
        if caller.credential_id == OPERATOR:
            return
        raise Forbidden(f"Only an owner, signed in to the dashboard, may {what}; an API key may not.")
    me = await repository.get_user(conn, caller.application_id, caller.user_id)
    if me is None or me.role != OWNER or me.status != ACTIVE:
        raise Forbidden(f"Only an owner may {what}.")


def _last_owner(done: str) -> InvalidState:
    return InvalidState(
        ACTIVE,
        f"This is the application's last active owner: it cannot be {done}. Make another user owner first.",
        allowed=(),
    )


async def _fresh(conn: AsyncConnection, user: User) -> User:
    found = await repository.get_user(conn, user.application_id, user.id)
    if found is None:  # pragma: no cover - the caller's transaction holds the row
        raise ResourceNotFound(f"No user {user.id}.")
    return found


async def _record(
    conn: AsyncConnection, clock: Clock, caller: Caller, action: str, user: User, changes: JsonObject
) -> None:
    await activity.record_by(conn, clock, caller, action, ("user", user.id), changes)
