"""Passwords: argon2id (argon2-cffi's PasswordHasher, its default parameters, RFC 9106's second
recommendation), compared in constant time by the library. A password is never logged, stored
or returned; only its hash is kept (users.password_hash)."""

from __future__ import annotations

import functools
from typing import Final

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from payorch.errors import ValidationFailed

MIN_LENGTH: Final = 12
MAX_LENGTH: Final = 1024  # bounds the hashing work a request can ask for

_HASHER: Final = PasswordHasher()  # argon2id



@functools.cache
def _nobody() -> str:
    """A hash of nothing anyone knows: verified against when no account matches, so the answer
    takes as long as for a wrong password (the time does not say whether the email has an
    account). Made at the first such sign-in, not at import: an argon2 hash costs about 0.1-0.2 s
    of CPU and 64 MiB, and every process (each command, each API and worker process) imports this."""
    return _HASHER.hash("no account has this password: it only spends the time")


def prepare() -> None:
    """Make the no-account hash now (an API process's start, off its event loop): the first
    sign-in with an unknown email then takes no longer than the next."""
    _nobody()


def password_problem(password: str) -> str | None:
    """Why ``password`` cannot be used, or None: the one place the rules are checked."""
    if len(password) < MIN_LENGTH:
        return f"must be at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters"
    return None


def check(password: str, field: str = "password") -> None:
    """Raise 400 VALIDATION_ERROR naming ``field`` when the password breaks a rule."""
    problem = password_problem(password)
    if problem is not None:
        raise ValidationFailed.field(field, problem)


def hash_password(password: str) -> str:
    check(password)
    return _HASHER.hash(password)


def verify(password_hash: str, password: str) -> bool:
    """Whether ``password`` matches (constant time); False for a damaged hash or an overlong
    password (not hashed: the work stays bounded)."""
    if len(password) > MAX_LENGTH:
        return False
    try:
        return _HASHER.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def verify_nobody(password: str) -> bool:
    """Spend a verification's time when no account matches; always False."""
    verify(_nobody(), password[:MAX_LENGTH])
    return False


def needs_rehash(password_hash: str) -> bool:
    """Whether the hash was made with older parameters: re-hash at the next sign-in."""
    try:
        return _HASHER.check_needs_rehash(password_hash)
    except InvalidHashError:
        return True
