"""payorch.users' service on SQLite and PostgreSQL: an invite's token is stored only as its
SHA-256, works once and for 72 hours; accepting sets an argon2id password (12 characters at
least) that sign-in's candidates verify; the last active owner cannot be demoted, disabled or
removed, also when two demotions race; only an owner (or the operator's command line) touches
owners; a role change, disabling or removal ends the person's dashboard sessions; each change
writes its activity entry, which never holds the token or the password."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from datetime import timedelta

import pytest
from sqlalchemy import ColumnElement, RowMapping, func, insert, select

from payorch.auth.service import Caller
from payorch.clock import FrozenClock
from payorch.db.tables.activity import activity_log
from payorch.db.tables.dashboard import dashboard_sessions
from payorch.db.tables.people import users as users_table
from payorch.errors import Forbidden, InvalidState, ResourceNotFound, ValidationFailed
from payorch.runtime import Runtime
from payorch.users import passwords, service
from payorch.users.records import User
from tests.kit import Sandbox

PASSWORD = "correct horse battery"


def operator(app: Sandbox) -> Caller:
    return Caller(app.application_id, "SANDBOX", "operator")


def person(user: User) -> Caller:
    return Caller(user.application_id, "SANDBOX", "", None, user.id, user.email)


async def active_user(runtime: Runtime, app: Sandbox, email: str, role: str) -> User:
    async with runtime.database.transaction() as conn:
        _, token = await service.invite(conn, runtime.clock, operator(app), email, role, limit=100)
        return await service.accept_invite(conn, runtime.clock, token, PASSWORD)


async def sessions_of(runtime: Runtime, user_id: str) -> int:
    async with runtime.database.reading() as conn:
        query = select(func.count()).where(dashboard_sessions.c.user_id == user_id)
        return int((await conn.execute(query)).scalar_one())


async def entries(runtime: Runtime, where: ColumnElement[bool]) -> list[RowMapping]:
    async with runtime.database.reading() as conn:
        query = select(activity_log).where(where).order_by(activity_log.c.seq)
        return list((await conn.execute(query)).mappings())


async def open_session(runtime: Runtime, user: User) -> None:
    now = runtime.clock.now()
    async with runtime.database.transaction() as conn:
        await conn.execute(
            insert(dashboard_sessions).values(
                id=hashlib.sha256(user.id.encode()).hexdigest(),
                application_id=user.application_id,
                credential_id=None,
                user_id=user.id,
                stage="ACTIVE",
                challenge=None,
                created_at=now,
                last_seen_at=now,
                expires_at=now + timedelta(hours=1),
            )
        )


async def test_an_invite_works_once_for_72_hours_and_sets_a_password(
    runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    tag = secrets.token_hex(4)  # sign-in's candidates span applications: an email of its own
    async with runtime.database.transaction() as conn:
        user, token = await service.invite(
            conn, runtime.clock, operator(sandbox), f"Ana.{tag}@Example.COM", "developer", limit=100
        )
    assert (user.email, user.role, user.status) == (f"ana.{tag}@example.com", "developer", "INVITED")
    assert user.id.startswith("usr_") and len(token) >= 40
    async with runtime.database.reading() as conn:
        row = (await conn.execute(select(users_table).where(users_table.c.id == user.id))).mappings().one()
    assert row["invite_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert row["password_hash"] is None

    # A short password is refused naming the field, and changes nothing.
    with pytest.raises(ValidationFailed) as refused:
        async with runtime.database.transaction() as conn:
            await service.accept_invite(conn, runtime.clock, token, "x" * 11)
    assert refused.value.details["errors"] == [
        {"field": "password", "message": "must be at least 12 characters"}
    ]
    async with runtime.database.transaction() as conn:
        accepted = await service.accept_invite(conn, runtime.clock, token, PASSWORD)
    assert accepted.status == "ACTIVE" and accepted.invite_expires_at is None
    with pytest.raises(ResourceNotFound):  # single use
        async with runtime.database.transaction() as conn:
            await service.accept_invite(conn, runtime.clock, token, PASSWORD)

    async with runtime.database.reading() as conn:
        candidates = await service.find_by_email_for_sign_in(conn, f"ANA.{tag}@example.com")
    assert [c.id for c, _ in candidates] == [user.id]
    stored = candidates[0][1]
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert passwords.verify(stored, PASSWORD) and not passwords.verify(stored, PASSWORD + "!")
    assert not passwords.needs_rehash(stored)

    # An invite older than 72 hours is refused; a renewed one works.
    async with runtime.database.transaction() as conn:
        late, old_token = await service.invite(
            conn, runtime.clock, operator(sandbox), "late@example.com", "viewer", limit=100
        )
    clock.advance(72 * 3600)
    with pytest.raises(ResourceNotFound):
        async with runtime.database.transaction() as conn:
            await service.accept_invite(conn, runtime.clock, old_token, PASSWORD)
    async with runtime.database.transaction() as conn:
        _, new_token = await service.renew_invite(conn, runtime.clock, operator(sandbox), late.id)
    async with runtime.database.transaction() as conn:
        assert (await service.accept_invite(conn, runtime.clock, new_token, PASSWORD)).status == "ACTIVE"

    # The same email twice in one application: 409, one user.
    with pytest.raises(InvalidState):
        async with runtime.database.transaction() as conn:
            await service.invite(
                conn, runtime.clock, operator(sandbox), f"ana.{tag}@example.com", "viewer", limit=100
            )

    rows = await entries(runtime, activity_log.c.application_id == sandbox.application_id)
    assert [r["action"] for r in rows] == [
        "user.invited",
        "user.invite_accepted",
        "user.invited",
        "user.invited",
        "user.invite_accepted",
    ]
    assert rows[1]["actor_type"] == "user" and rows[1]["actor_id"] == user.id
    assert rows[0]["actor_type"] == "system" and rows[0]["actor_id"] == "operator"
    text = repr([dict(r) for r in rows])
    for secret in (token, old_token, new_token, PASSWORD):
        assert secret not in text


async def test_the_last_active_owner_stays_even_when_two_demotions_race(
    runtime: Runtime, sandbox: Sandbox
) -> None:
    first = await active_user(runtime, sandbox, "first@example.com", "owner")
    for change in (
        lambda conn: service.set_role(conn, runtime.clock, person(first), first.id, "admin"),
        lambda conn: service.disable(conn, runtime.clock, person(first), first.id),
        lambda conn: service.remove(conn, runtime.clock, person(first), first.id),
    ):
        with pytest.raises(InvalidState, match="last active owner"):
            async with runtime.database.transaction() as conn:
                await change(conn)
    second = await active_user(runtime, sandbox, "second@example.com", "owner")

    async def demote(target: User) -> str:  # as the operator: an owner who is demoted first
        try:  # could no longer demote (403), which would hide the race
            async with runtime.database.transaction() as conn:
                await service.set_role(conn, runtime.clock, operator(sandbox), target.id, "admin")
        except InvalidState:
            return "refused"
        return "demoted"

    outcomes = await asyncio.gather(demote(second), demote(first))
    assert sorted(outcomes) == ["demoted", "refused"]
    async with runtime.database.reading() as conn:
        roles = {
            u.email: (u.role, u.status)
            for u in (await service.list_users(conn, operator(sandbox), None, 10)).items
        }
    assert sorted(roles.values()) == [("admin", "ACTIVE"), ("owner", "ACTIVE")]


async def test_only_an_owner_touches_owners_and_changes_end_sessions(
    runtime: Runtime, sandbox: Sandbox
) -> None:
    owner = await active_user(runtime, sandbox, "owner@example.com", "owner")
    admin = await active_user(runtime, sandbox, "admin@example.com", "admin")
    dev = await active_user(runtime, sandbox, "dev@example.com", "developer")
    key = Caller(sandbox.application_id, "SANDBOX", "key_x")
    for caller in (person(admin), key):
        with pytest.raises(Forbidden):
            async with runtime.database.transaction() as conn:
                await service.set_role(conn, runtime.clock, caller, dev.id, "owner")
        with pytest.raises(Forbidden):
            async with runtime.database.transaction() as conn:
                await service.remove(conn, runtime.clock, caller, owner.id)
        with pytest.raises(Forbidden):
            async with runtime.database.transaction() as conn:
                await service.invite(conn, runtime.clock, caller, "new@example.com", "owner", limit=100)

    await open_session(runtime, dev)
    async with runtime.database.transaction() as conn:  # an admin changes a non-owner's role
        changed = await service.set_role(conn, runtime.clock, person(admin), dev.id, "operator")
    assert changed.role == "operator" and await sessions_of(runtime, dev.id) == 0

    await open_session(runtime, dev)
    async with runtime.database.transaction() as conn:
        assert (await service.disable(conn, runtime.clock, person(admin), dev.id)).status == "DISABLED"
    assert await sessions_of(runtime, dev.id) == 0
    async with runtime.database.transaction() as conn:
        assert (await service.enable(conn, runtime.clock, person(admin), dev.id)).status == "ACTIVE"

    await open_session(runtime, dev)
    async with runtime.database.transaction() as conn:
        await service.remove(conn, runtime.clock, person(owner), dev.id)
        assert await service.find(conn, sandbox.application_id, dev.id) is None
    assert await sessions_of(runtime, dev.id) == 0

    rows = await entries(runtime, activity_log.c.resource_id == dev.id)
    assert [r["action"] for r in rows][2:] == [
        "user.role_changed",
        "user.disabled",
        "user.enabled",
        "user.removed",
    ]
    assert rows[2]["changes"] == {"role": {"from": "developer", "to": "operator"}}
    assert (rows[2]["actor_type"], rows[2]["actor_id"], rows[2]["actor_email"]) == (
        "user",
        admin.id,
        admin.email,
    )


def test_the_password_rule_is_one_function_with_a_clear_message() -> None:
    assert passwords.password_problem("a" * 12) is None
    assert passwords.password_problem("a" * 11) == "must be at least 12 characters"
    assert passwords.password_problem("a" * 1025) == "must be at most 1024 characters"
    assert not passwords.verify(passwords.hash_password("a" * 12), "a" * 1025)
    assert not passwords.verify_nobody("anything at all")
