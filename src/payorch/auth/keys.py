"""API key format: pay_sb_<prefix>_<secret> (sandbox), pay_live_<prefix>_<secret> (production).

The prefix (48 random bits) finds the row; the secret (192 random bits) is stored only as its
SHA-256. A fast hash is enough: the secret is random and long, so it cannot be guessed from
the hash, and authentication stays cheap on every request.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

KEY_PATTERN = re.compile(r"^pay_(sb|live)_([0-9a-f]{12})_([0-9a-f]{48})$")
ENVIRONMENT_OF_TAG = {"sb": "SANDBOX", "live": "PRODUCTION"}
TAG_OF_ENVIRONMENT = {v: k for k, v in ENVIRONMENT_OF_TAG.items()}


@dataclass(frozen=True)
class NewKey:
    api_key: str
    prefix: str
    secret_hash: str


@dataclass(frozen=True)
class ParsedKey:
    environment: str
    prefix: str
    secret: str


def generate(environment: str) -> NewKey:
    prefix = secrets.token_hex(6)
    secret = secrets.token_hex(24)
    return NewKey(f"pay_{TAG_OF_ENVIRONMENT[environment]}_{prefix}_{secret}", prefix, hash_secret(secret))


def parse(api_key: str) -> ParsedKey | None:
    match = KEY_PATTERN.match(api_key)
    if not match:
        return None
    return ParsedKey(ENVIRONMENT_OF_TAG[match.group(1)], match.group(2), match.group(3))


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret).encode(), stored_hash.encode())  # bytes: any text
