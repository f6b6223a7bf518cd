"""simulator/credentials.py's ``owner_of_key``: a MOCK key that names its application is that
application's only when it is the key its registration derives; the public key is the public
owner's; anything else, no one's."""

from __future__ import annotations

from payorch.crypto import Cipher
from payorch.providers.registry import REGISTRATIONS
from payorch.simulator.credentials import PUBLIC_OWNER, mock_credentials, owner_of_key

SECRET = "owner-of-key-test-secret-0123456789abcdef"


def test_a_key_naming_its_application_is_that_applications_only_when_derived() -> None:
    cipher, checked = Cipher([SECRET]), 0
    for registration in REGISTRATIONS:
        provider = registration.simulator_name
        for name, key in mock_credentials(cipher, provider, "app_0a1b2c").items():
            secret = key.replace("app_0a1b2c", "")
            if "app_0a1b2c" not in key or len(secret) < 16:
                continue  # a credential that does not name its application, or one with no secret
            assert owner_of_key(cipher, provider, name, key, "public-key") == "app_0a1b2c"
            tampered = key[:-1] + ("x" if key[-1] != "x" else "y")
            assert owner_of_key(cipher, provider, name, tampered, "public-key") is None
            forged = key.replace("app_0a1b2c", "app_9z9z9z")
            assert owner_of_key(cipher, provider, name, forged, "public-key") is None
            assert owner_of_key(cipher, provider, name, "public-key", "public-key") == PUBLIC_OWNER
            assert owner_of_key(cipher, provider, name, "", "public-key") is None
            checked += 1
    assert checked  # at least one provider's key names its application
