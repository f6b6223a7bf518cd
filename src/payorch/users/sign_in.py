"""Signing a person in: the password, then a second factor (a TOTP code, a passkey, or a
recovery code once), with a lock per account after repeated failures, and an activity entry for
each outcome (never the typed password or code).

An email may have accounts in several applications. The password is tried against each of its
ACTIVE, unlocked accounts: none matches, a failure is counted on every one of them; one matches,
that account goes on; several match (the same password in several applications), the person is
asked which application after the password (``ChooseApplication``) and posts it again with the
application's id. A locked account is not tried, and every refusal reads the same
(``SignInRefused``), so the answer says nothing of which accounts exist or are locked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.access.roles import MFA_ROLES
from payorch.activity.records import Actor, Change
from payorch.activity.service import record
from payorch.clock import Clock
from payorch.crypto import Cipher
from payorch.ids import new_id
from payorch.users import passkeys, passwords, recovery_codes, totp
from payorch.users import service as users
from payorch.users import sign_in_repository as repository
from payorch.users.records import ACTIVE, User
from payorch.users.sign_in_records import Passkey

Method = Literal["password", "totp", "passkey", "recovery_code"]
FailureReason = Literal["password", "second_factor", "locked"]


@dataclass(frozen=True, slots=True)
class Rules:
    """The settings sign-in follows (PAYORCH_SIGN_IN_*, PAYORCH_REQUIRE_MFA_FOR_ALL)."""

    max_failures: int
    lock_seconds: int
    require_mfa_for_all: bool


class SignInRefused(Exception):
    """Wrong email or password, or a locked account: one answer for all."""


class SecondFactorRefused(Exception):
    """The code or passkey did not verify; ``locked`` when that failure locked the user."""

    def __init__(self, locked: bool) -> None:
        super().__init__("second factor refused")
        self.locked = locked


@dataclass(frozen=True, slots=True)
class ChooseApplication:
    """The password matched accounts in several applications: which one?"""

    applications: list[tuple[str, str]]  # (id, name)


def _actor(user: User) -> Actor:
    return Actor("user", user.id, user.email)


async def _record(
    conn: AsyncConnection,
    clock: Clock,
    user: User,
    action: str,
    changes: dict[str, str | int],
    outcome: Literal["success", "failure"] = "success",
) -> None:
    change = Change(
        application_id=user.application_id,
        actor=_actor(user),
        action=action,
        resource_type="user",
        resource_id=user.id,
        outcome=outcome,
        changes=dict(changes),
    )
    await record(conn, clock, change)


def _locked(user: User, now: datetime) -> bool:
    return user.locked_until is not None and user.locked_until > now


async def _failed(
    conn: AsyncConnection, clock: Clock, rules: Rules, user: User, reason: FailureReason
) -> bool:
    """Counts the failure (unless the account is locked already: ``reason`` "locked") and logs
    it; the ``rules.max_failures``-th in a row locks the account. Returns whether it is locked."""
    changes: dict[str, str | int] = {"reason": reason}
    locked = reason == "locked"
    if not locked:
        failures = user.failed_sign_ins + 1
        locked = failures >= rules.max_failures
        until = clock.now() + timedelta(seconds=rules.lock_seconds) if locked else None
        await users.note_failed_sign_in(conn, user, failures=0 if locked else failures, locked_until=until)
        if locked:
            changes["locked_seconds"] = rules.lock_seconds
    await _record(conn, clock, user, "user.sign_in_failed", changes, "failure")
    return locked


async def check_password(
    conn: AsyncConnection,
    clock: Clock,
    rules: Rules,
    email: str,
    password: str,
    application_id: str = "",
) -> User | ChooseApplication:
    """The account whose password ``password`` is (in ``application_id`` if given)."""
    now = clock.now()
    candidates = [
        (user, password_hash)
        for user, password_hash in await users.find_by_email_for_sign_in(conn, email)
        if user.status == ACTIVE and application_id in ("", user.application_id)
    ]
    if not candidates:
        passwords.verify_nobody(password)  # as long as a known email's check
        raise SignInRefused()
    matched: list[User] = []
    wrong: list[User] = []
    for user, password_hash in candidates:
        if _locked(user, now):
            passwords.verify_nobody(password)  # not tried, in the time of a try
            await _failed(conn, clock, rules, user, "locked")
        elif passwords.verify(password_hash, password):
            matched.append(user)
        else:
            wrong.append(user)
    if not matched:
        for user in wrong:
            await _failed(conn, clock, rules, user, "password")
        raise SignInRefused()
    if len(matched) > 1:
        names = await repository.application_names(conn, [u.application_id for u in matched])
        return ChooseApplication([(u.application_id, names.get(u.application_id, "")) for u in matched])
    return matched[0]


async def needs_second_factor(conn: AsyncConnection, rules: Rules, user: User) -> bool:
    """Owners and admins (MFA_ROLES), everyone under PAYORCH_REQUIRE_MFA_FOR_ALL, and anyone who
    enrolled a factor sign in with a second factor."""
    if user.role in MFA_ROLES or rules.require_mfa_for_all:
        return True
    return await has_second_factor(conn, user)


async def has_second_factor(conn: AsyncConnection, user: User) -> bool:
    if await repository.totp_secret_of(conn, user.id) is not None:
        return True
    return bool(await repository.passkeys_of(conn, user.id))


async def has_totp(conn: AsyncConnection, user: User) -> bool:
    return await repository.totp_secret_of(conn, user.id) is not None


async def has_passkey(conn: AsyncConnection, user: User) -> bool:
    return bool(await repository.passkeys_of(conn, user.id))


async def pending_user(
    conn: AsyncConnection, clock: Clock, rules: Rules, application_id: str, user_id: str
) -> User:
    """The person a PASSWORD-stage session is for, if they still may sign in (ACTIVE, unlocked)."""
    user = await users.find(conn, application_id, user_id)
    if user is None or user.status != ACTIVE:
        raise SignInRefused()
    if _locked(user, clock.now()):
        await _failed(conn, clock, rules, user, "locked")
        raise SignInRefused()
    return user


async def check_code(
    conn: AsyncConnection, clock: Clock, rules: Rules, cipher: Cipher, user: User, code: str
) -> Method:
    """A TOTP code, or one of the account's unused recovery codes (then used up)."""
    now = clock.now()
    if recovery_codes.looks_like_a_recovery_code(code):
        if await repository.use_recovery_code(conn, user.id, recovery_codes.code_hash(code), now):
            left = await repository.recovery_codes_left(conn, user.id)
            await _record(conn, clock, user, "user.recovery_code_used", {"codes_left": left})
            return "recovery_code"
    else:
        secret = await repository.totp_secret_of(conn, user.id)
        step = None if secret is None else totp.matching_step(cipher.decrypt(secret), code, now)
        # A code is good once: the step is taken only if it is later than the last one used
        # (one conditional UPDATE, so two requests racing with the same code cannot both pass).
        if step is not None and await repository.take_totp_step(conn, user.id, step):
            return "totp"
    raise SecondFactorRefused(await _failed(conn, clock, rules, user, "second_factor"))


async def passkey_sign_in_options(
    conn: AsyncConnection, party: passkeys.RelyingParty, user: User
) -> passkeys.Options:
    owned = await repository.passkeys_of(conn, user.id)
    return passkeys.authentication_options(party, [p.credential_id for p in owned])


async def check_passkey(
    conn: AsyncConnection,
    clock: Clock,
    rules: Rules,
    party: passkeys.RelyingParty,
    user: User,
    challenge: str,
    answer: str,
) -> Method:
    """The browser's answer to the options of ``challenge``, signed by one of the account's passkeys."""
    try:
        named = passkeys.answered_credential_id(answer)
        owned = {p.credential_id: p for p in await repository.passkeys_of(conn, user.id)}
        passkey = owned.get(named)
        if passkey is None:
            raise passkeys.PasskeyRefused("not one of this account's passkeys")
        count = passkeys.verify_authentication(
            party, challenge, answer, passkey.public_key, passkey.sign_count
        )
    except passkeys.PasskeyRefused:
        raise SecondFactorRefused(await _failed(conn, clock, rules, user, "second_factor")) from None
    await repository.passkey_used(conn, passkey.id, count, clock.now())
    return "passkey"


async def signed_in(
    conn: AsyncConnection,
    clock: Clock,
    user: User,
    method: Method,
    *,
    password: str | None = None,
    password_hash: str | None = None,
) -> None:
    """The person is in: their failure count starts again; logged as user.signed_in."""
    await users.note_signed_in(conn, clock, user, password=password, password_hash=password_hash)
    await _record(conn, clock, user, "user.signed_in", {"method": method})


async def signed_out(conn: AsyncConnection, clock: Clock, application_id: str, user_id: str) -> None:
    user = await users.find(conn, application_id, user_id)
    if user is not None:
        await _record(conn, clock, user, "user.signed_out", {})


async def enroll_totp(
    conn: AsyncConnection, clock: Clock, cipher: Cipher, user: User, secret: str, code: str
) -> bool:
    """Keeps ``secret`` (encrypted) as the account's TOTP secret if ``code`` is its current code
    (the person's app holds it); False otherwise, nothing kept. The confirming code counts as
    used: it cannot sign in afterwards."""
    step = totp.matching_step(secret, code, clock.now())
    if step is None:
        return False
    await repository.set_totp_secret(conn, user.id, cipher.encrypt(secret), step, clock.now())
    await _record(conn, clock, user, "user.mfa_enrolled", {"factor": "totp"})
    return True


async def passkey_registration_options(
    conn: AsyncConnection, party: passkeys.RelyingParty, user: User
) -> passkeys.Options:
    owned = await repository.passkeys_of(conn, user.id)
    return passkeys.registration_options(party, user.id, user.email, [p.credential_id for p in owned])


async def enroll_passkey(
    conn: AsyncConnection,
    clock: Clock,
    party: passkeys.RelyingParty,
    user: User,
    challenge: str,
    answer: str,
) -> None:
    """Keeps the passkey the browser created (raises passkeys.PasskeyRefused if it does not verify)."""
    created = passkeys.verify_registration(party, challenge, answer)
    now = clock.now()
    count = len(await repository.passkeys_of(conn, user.id))
    passkey = Passkey(
        id=new_id("pk"),
        user_id=user.id,
        credential_id=created.credential_id,
        public_key=created.public_key,
        sign_count=created.sign_count,
        name=f"Passkey {count + 1}",
        created_at=now,
    )
    await repository.insert_passkey(conn, passkey)
    await _record(conn, clock, user, "user.mfa_enrolled", {"factor": "passkey"})


async def new_recovery_codes(conn: AsyncConnection, clock: Clock, user: User) -> list[str]:
    """Ten new recovery codes for the account (the old ones stop working); shown once."""
    codes = recovery_codes.new_codes()
    await repository.replace_recovery_codes(
        conn, user.id, [recovery_codes.code_hash(c) for c in codes], clock.now()
    )
    return codes


async def recovery_codes_left(conn: AsyncConnection, user: User) -> int:
    return await repository.recovery_codes_left(conn, user.id)
