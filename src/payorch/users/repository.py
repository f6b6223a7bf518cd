"""All SQL of users (records.py). The hashes (password, invite) are read only by the functions
that need them and never put in a User."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import RowMapping, Update, bindparam, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import field_names, record_of
from payorch.db.tables.people import user_passkeys, user_recovery_codes, users
from payorch.users.records import ACTIVE, INVITED, OWNER, User

_FIELDS = field_names(User)
_USER_COLUMNS = tuple(users.c[name] for name in _FIELDS)


def _user(row: RowMapping) -> User:
    return record_of(User, row)


async def insert_user(
    conn: AsyncConnection, user: User, *, invite_hash: str | None, password_hash: str | None
) -> None:
    values = {name: getattr(user, name) for name in _FIELDS}
    await conn.execute(
        insert(users).values(**values, invite_hash=invite_hash, password_hash=password_hash, totp_secret=None)
    )


_GET = select(*_USER_COLUMNS).where(
    users.c.id == bindparam("user_id"), users.c.application_id == bindparam("application_id")
)


async def get_user(conn: AsyncConnection, application_id: str, user_id: str) -> User | None:
    params = {"user_id": user_id, "application_id": application_id}
    row = (await conn.execute(_GET, params)).mappings().first()
    return _user(row) if row is not None else None


_BY_EMAIL = select(*_USER_COLUMNS).where(
    users.c.email == bindparam("email"), users.c.application_id == bindparam("application_id")
)


async def get_by_email(conn: AsyncConnection, application_id: str, email: str) -> User | None:
    params = {"email": email, "application_id": application_id}
    row = (await conn.execute(_BY_EMAIL, params)).mappings().first()
    return _user(row) if row is not None else None


_SIGN_IN_CANDIDATES = (
    select(*_USER_COLUMNS, users.c.password_hash)
    .where(users.c.email == bindparam("email"), users.c.password_hash.is_not(None))
    .order_by(users.c.id)
)


async def sign_in_candidates(conn: AsyncConnection, email: str) -> list[tuple[User, str]]:
    result = await conn.execute(_SIGN_IN_CANDIDATES, {"email": email})
    return [(_user(row), str(row["password_hash"])) for row in result.mappings()]


_BY_INVITE = select(*_USER_COLUMNS).where(users.c.invite_hash == bindparam("invite_hash"))


async def get_by_invite(conn: AsyncConnection, invite_hash: str) -> User | None:
    row = (await conn.execute(_BY_INVITE, {"invite_hash": invite_hash})).mappings().first()
    return _user(row) if row is not None else None


_LIST = (
    select(*_USER_COLUMNS)
    .where(users.c.application_id == bindparam("application_id"))
    .order_by(users.c.id.desc())
    .limit(bindparam("limit"))
)
_LIST_BEFORE = _LIST.where(users.c.id < bindparam("before"))


async def list_users(
    conn: AsyncConnection, application_id: str, *, before: str | None, limit: int
) -> list[User]:
    """Newest first, keyset on the id (ids are time-ordered)."""
    params: dict[str, object] = {"application_id": application_id, "limit": limit}
    if before is None:
        result = await conn.execute(_LIST, params)
    else:
        result = await conn.execute(_LIST_BEFORE, {**params, "before": before})
    return [_user(row) for row in result.mappings()]


async def count_users(conn: AsyncConnection, application_id: str) -> int:
    query = select(func.count()).select_from(users).where(users.c.application_id == application_id)
    return int((await conn.execute(query)).scalar_one())


_ACTIVE_OWNERS = (
    select(users.c.id)
    .where(
        users.c.application_id == bindparam("application_id"),
        users.c.role == OWNER,
        users.c.status == ACTIVE,
    )
    .order_by(users.c.id)
    .with_for_update()
)


async def lock_active_owners(conn: AsyncConnection, application_id: str) -> list[str]:
    """The ids of the application's active owners, locked until the transaction ends
    (PostgreSQL; SQLite's BEGIN IMMEDIATE serializes writers anyway)."""
    result = await conn.execute(_ACTIVE_OWNERS, {"application_id": application_id})
    return [str(value) for value in result.scalars()]


# No bind parameter of an update is named after a column: SQLAlchemy keeps those for SET.
def _update_of(application_id: str, user_id: str) -> Update:
    return update(users).where(users.c.id == user_id, users.c.application_id == application_id)


async def set_role(conn: AsyncConnection, application_id: str, user_id: str, role: str, at: datetime) -> None:
    await conn.execute(_update_of(application_id, user_id).values(role=role, updated_at=at))


async def set_status(
    conn: AsyncConnection, application_id: str, user_id: str, status: str, at: datetime
) -> None:
    await conn.execute(_update_of(application_id, user_id).values(status=status, updated_at=at))


async def set_invite(
    conn: AsyncConnection,
    application_id: str,
    user_id: str,
    invite_hash: str,
    expires_at: datetime,
    at: datetime,
) -> None:
    await conn.execute(
        _update_of(application_id, user_id).values(
            invite_hash=invite_hash, invite_expires_at=expires_at, updated_at=at
        )
    )


async def accept_invite(
    conn: AsyncConnection, user_id: str, invite_hash: str, password_hash: str, at: datetime
) -> bool:
    """Sets the password and clears the invite, if the invite is still this user's (two
    acceptances at once: one wins)."""
    statement = (
        update(users)
        .where(
            users.c.id == user_id,
            users.c.invite_hash == invite_hash,
            users.c.status == INVITED,
        )
        .values(
            password_hash=password_hash,
            status=ACTIVE,
            invite_hash=None,
            invite_expires_at=None,
            failed_sign_ins=0,
            locked_until=None,
            updated_at=at,
        )
    )
    return (await conn.execute(statement)).rowcount == 1


async def set_password_hash(conn: AsyncConnection, user_id: str, password_hash: str, at: datetime) -> None:
    statement = update(users).where(users.c.id == user_id)
    await conn.execute(statement.values(password_hash=password_hash, updated_at=at))


async def note_failed_sign_in(
    conn: AsyncConnection, user_id: str, failures: int, locked_until: datetime | None
) -> None:
    statement = update(users).where(users.c.id == user_id)
    await conn.execute(statement.values(failed_sign_ins=failures, locked_until=locked_until))


async def note_signed_in(conn: AsyncConnection, user_id: str, at: datetime) -> None:
    statement = update(users).where(users.c.id == user_id)
    await conn.execute(statement.values(failed_sign_ins=0, locked_until=None, last_signed_in_at=at))


async def delete_user(conn: AsyncConnection, application_id: str, user_id: str) -> None:
    """The user and what hangs on them here (recovery codes, passkeys); their dashboard sessions
    are the dashboard's to delete, first."""
    await conn.execute(delete(user_recovery_codes).where(user_recovery_codes.c.user_id == user_id))
    await conn.execute(delete(user_passkeys).where(user_passkeys.c.user_id == user_id))
    await conn.execute(delete(users).where(users.c.id == user_id, users.c.application_id == application_id))
