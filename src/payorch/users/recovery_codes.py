"""One-time recovery codes: ten codes shown once when a second factor is enrolled, each taking
the place of the second factor once. Stored as SHA-256 (a code is 50 random bits, so a plain
hash is enough: nothing to guess from)."""

from __future__ import annotations

import hashlib
import secrets

COUNT = 10
_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i to misread
_LENGTH = 10  # 31^10 ~ 2^49.5


def new_codes() -> list[str]:
    """``COUNT`` new codes, written xxxxx-xxxxx."""
    codes = []
    for _ in range(COUNT):
        raw = "".join(secrets.choice(_ALPHABET) for _ in range(_LENGTH))
        codes.append(f"{raw[:5]}-{raw[5:]}")
    return codes


def normalized(code: str) -> str:
    """What was typed, without spaces or dashes, lowercased."""
    return "".join(ch for ch in code.lower() if ch.isalnum())


def code_hash(code: str) -> str:
    return hashlib.sha256(normalized(code).encode()).hexdigest()


def looks_like_a_recovery_code(code: str) -> bool:
    return len(normalized(code)) == _LENGTH
