"""The SQL of signing in (payorch.users.sign_in) that payorch.users' repository does not hold:
the TOTP secret (encrypted), recovery codes, passkeys, and the applications' names."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import column_values, record_of
from payorch.db.tables import applications
from payorch.db.tables.people import user_passkeys, user_recovery_codes, users
from payorch.ids import new_id
from payorch.users.sign_in_records import Passkey


async def application_names(conn: AsyncConnection, application_ids: list[str]) -> dict[str, str]:
    """The names of ``application_ids`` (the choice of application, the authenticator's label)."""
    query = select(applications.c.id, applications.c.name).where(applications.c.id.in_(application_ids))
    return {row.id: row.name for row in await conn.execute(query)}


async def totp_secret_of(conn: AsyncConnection, user_id: str) -> str | None:
    """The person's TOTP secret, encrypted; None before they enroll one."""
    query = select(users.c.totp_secret).where(users.c.id == user_id)
    return (await conn.execute(query)).scalar_one_or_none()


async def set_totp_secret(
    conn: AsyncConnection, user_id: str, encrypted: str, used_step: int, now: datetime
) -> None:
    """Keeps the secret; ``used_step`` is the step of the code that confirmed it."""
    await conn.execute(
        update(users)
        .where(users.c.id == user_id)
        .values(totp_secret=encrypted, totp_last_step=used_step, updated_at=now)
    )


async def take_totp_step(conn: AsyncConnection, user_id: str, step: int) -> bool:
    """Marks TOTP time step ``step`` used; False if it or a later one was used already."""
    last = users.c.totp_last_step
    query = (
        update(users)
        .where(users.c.id == user_id, or_(last.is_(None), last < step))
        .values(totp_last_step=step)
    )
    return (await conn.execute(query)).rowcount == 1


async def replace_recovery_codes(
    conn: AsyncConnection, user_id: str, hashes: list[str], now: datetime
) -> None:
    await conn.execute(delete(user_recovery_codes).where(user_recovery_codes.c.user_id == user_id))
    await conn.execute(
        insert(user_recovery_codes),
        [{"id": new_id("urc"), "user_id": user_id, "code_hash": h, "created_at": now} for h in hashes],
    )


async def use_recovery_code(conn: AsyncConnection, user_id: str, code_hash: str, now: datetime) -> bool:
    """Marks the unused code ``code_hash`` of ``user_id`` used; False if there is none."""
    used = await conn.execute(
        update(user_recovery_codes)
        .where(
            user_recovery_codes.c.user_id == user_id,
            user_recovery_codes.c.code_hash == code_hash,
            user_recovery_codes.c.used_at.is_(None),
        )
        .values(used_at=now)
    )
    return used.rowcount == 1


async def recovery_codes_left(conn: AsyncConnection, user_id: str) -> int:
    query = select(func.count()).where(
        user_recovery_codes.c.user_id == user_id, user_recovery_codes.c.used_at.is_(None)
    )
    return int((await conn.execute(query)).scalar_one())


async def passkeys_of(conn: AsyncConnection, user_id: str) -> list[Passkey]:
    query = select(user_passkeys).where(user_passkeys.c.user_id == user_id).order_by(user_passkeys.c.id)
    return [record_of(Passkey, row) for row in (await conn.execute(query)).mappings()]


async def insert_passkey(conn: AsyncConnection, passkey: Passkey) -> None:
    await conn.execute(insert(user_passkeys).values(column_values(passkey)))


async def passkey_used(conn: AsyncConnection, passkey_id: str, sign_count: int, now: datetime) -> None:
    await conn.execute(
        update(user_passkeys)
        .where(user_passkeys.c.id == passkey_id)
        .values(sign_count=sign_count, last_used_at=now)
    )
