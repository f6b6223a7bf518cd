"""Encryption at rest for provider credentials, webhook secrets and people's TOTP secrets
(payorch.secret_rotation lists every place a value encrypted here is stored).

PAYORCH_SECRET_KEY may list several keys separated by commas: the first encrypts, every one
decrypts, so a key is rotated by prepending the new one and re-encrypting (`payorch secret-key
reencrypt`, docs/deployment.md).
Each key text is stretched with HKDF into a Fernet key (AES-128-CBC + HMAC-SHA256).
"""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from payorch.config import Settings, SettingsError


class Cipher:
    def __init__(self, key_texts: list[str]) -> None:
        fernets = [Fernet(_derive(text)) for text in key_texts]
        self._fernet = MultiFernet(fernets)
        self._current = fernets[0]
        self._first = key_texts[0]
        # Derived once per purpose: the simulator checks MOCK credentials on every call (several
        # derivations per sandbox payment), and a key derived from the one held here adds nothing
        # to what this object already holds in memory.
        self._derived: dict[str, bytes] = {}

    def derive(self, purpose: str) -> bytes:
        """A 32-byte key for one purpose (e.g. signing simulator credentials), from the first key."""
        derived = self._derived.get(purpose)
        if derived is None:
            info = purpose.encode()
            hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"payorch-derive", info=info)
            derived = self._derived[purpose] = hkdf.derive(self._first.encode())
        return derived

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken:
            raise ValueError("cannot decrypt: wrong PAYORCH_SECRET_KEY?") from None

    def reencrypted(self, token: str) -> str | None:
        """``token`` encrypted under the first key, or None when it is under the first key
        already (``payorch secret-key reencrypt``); ValueError when no key decrypts it."""
        try:
            self._current.decrypt(token.encode())
        except InvalidToken:
            pass
        else:
            return None
        try:
            return self._fernet.rotate(token.encode()).decode()
        except InvalidToken:
            raise ValueError("cannot decrypt: wrong PAYORCH_SECRET_KEY?") from None

    def __repr__(self) -> str:
        return "Cipher(***)"


def _derive(text: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"payorch-at-rest", info=b"fernet")
    return base64.urlsafe_b64encode(hkdf.derive(text.encode()))


def load_cipher(settings: Settings) -> Cipher:
    """The cipher from PAYORCH_SECRET_KEY, or from the key file beside the embedded database."""
    if settings.secret_key is not None:
        keys = [k.strip() for k in settings.secret_key.get_secret_value().split(",")]
        return Cipher(keys)
    if not settings.is_sqlite:
        raise SettingsError("PAYORCH_SECRET_KEY: required when the database is PostgreSQL")
    db_path = settings.sqlite_path
    if db_path is None:  # in-memory database: nothing to keep the key beside
        return Cipher([secrets.token_urlsafe(32)])
    key_path = Path(str(db_path) + ".key")
    if not key_path.exists():
        key_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    return Cipher([key_path.read_text().strip()])
