"""MOCK credentials: derived from PAYORCH_SECRET_KEY, none stored, one set per application.

The simulator scopes all its state (transactions, preferences, payments, faults) by the owner a
credential maps to: an application id, or "public" for the published test credentials anyone may
use with the official SDKs by hand. Each provider's registration derives its MOCK credentials;
each simulator package says who presented them and keeps its public ones
(simulator/<name>/credentials.py).
"""

from __future__ import annotations

import hmac
import re

from payorch.crypto import Cipher
from payorch.providers.registry import REGISTRATIONS

PUBLIC_OWNER = "public"
APPLICATION_IDS = re.compile(r"app_[0-9a-z]+")


def mock_credentials(cipher: Cipher, provider: str, application_id: str) -> dict[str, str]:
    """The credentials a MOCK connector of ``application_id`` presents to the simulated
    ``provider`` (the simulator's name for it), as its registration derives them."""
    for registration in REGISTRATIONS:
        if registration.simulator_name == provider:
            return registration.mock_credentials(cipher, application_id)
    raise ValueError(f"unknown provider {provider!r}")


def credential(cipher: Cipher, provider: str, owner: str, name: str, public: str) -> str:
    """``owner``'s MOCK credential ``name`` at the simulated ``provider``; ``public``, the published
    one, for the public owner."""
    return public if owner == PUBLIC_OWNER else mock_credentials(cipher, provider, owner)[name]


def owner_of_key(cipher: Cipher, provider: str, name: str, presented: str, public: str) -> str | None:
    """The owner of ``presented``, a MOCK credential ``name`` that names its application within it
    (``app_...``): the public owner for ``public``, else the application it names whose own
    ``name`` it is (compared in constant time), else None."""
    if hmac.compare_digest(presented.encode(), public.encode()):
        return PUBLIC_OWNER
    for application_id in APPLICATION_IDS.findall(presented)[:2]:
        expected = mock_credentials(cipher, provider, application_id)[name]
        if hmac.compare_digest(presented.encode(), expected.encode()):
            return str(application_id)
    return None
