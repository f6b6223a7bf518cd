"""MOCK credentials: derived per application, recognised in constant time, forged ones refused."""

from __future__ import annotations

import hashlib
import hmac

from payorch.crypto import Cipher
from payorch.simulator.credentials import PUBLIC_OWNER, credential, mock_credentials
from payorch.simulator.provider_a.credentials import PUBLIC_A_API_KEY, PUBLIC_A_COMMERCE_CODE
from payorch.simulator.registry import BY_NAME

CIPHER = Cipher(["credentials-test-key"])


def application_of(cipher: Cipher, provider: str, presented: dict[str, str]) -> str | None:
    """Who the simulated ``provider`` takes ``presented`` for (its registered owner check);
    None for a provider the simulator does not serve."""
    simulated = BY_NAME.get(provider)
    return simulated.owner_of(cipher, presented) if simulated is not None else None


APP = "app_01abcdefghjkmnpqrstvwxyz012"


def test_provider_a_shape_matches_contract() -> None:
    creds = mock_credentials(CIPHER, "provider_a", APP)
    expected = hmac.new(CIPHER.derive("simulator"), f"provider_a:{APP}".encode(), hashlib.sha256).hexdigest()
    assert creds == {"commerce_code": APP, "api_key": expected}
    assert application_of(CIPHER, "provider_a", creds) == APP


def test_provider_b_shape_matches_contract() -> None:
    creds = mock_credentials(CIPHER, "provider_b", APP)
    key = CIPHER.derive("simulator")
    token_mac = hmac.new(key, f"provider_b:{APP}".encode(), hashlib.sha256).hexdigest()[:32]
    hook = hmac.new(key, f"provider_b-webhook:{APP}".encode(), hashlib.sha256).hexdigest()
    assert creds == {"access_token": f"TEST-{APP}-{token_mac}", "webhook_secret": hook}
    assert application_of(CIPHER, "provider_b", {"access_token": creds["access_token"]}) == APP


def test_forged_and_foreign_credentials_are_refused() -> None:
    a = mock_credentials(CIPHER, "provider_a", APP)
    assert (
        application_of(
            CIPHER,
            "provider_a",
            {**a, "api_key": a["api_key"][:-1] + ("1" if a["api_key"][-1] == "0" else "0")},
        )
        is None
    )
    assert application_of(CIPHER, "provider_a", {**a, "commerce_code": "app_other"}) is None
    assert application_of(CIPHER, "provider_a", {}) is None
    other = Cipher(["another-key"])
    assert application_of(other, "provider_a", a) is None
    b = mock_credentials(CIPHER, "provider_b", APP)["access_token"]
    assert application_of(CIPHER, "provider_b", {"access_token": b[:-1] + "x"}) is None
    assert application_of(CIPHER, "provider_b", {"access_token": "TEST-x"}) is None
    assert application_of(CIPHER, "provider_b", {"access_token": ""}) is None
    assert application_of(other, "provider_b", {"access_token": b}) is None
    assert application_of(CIPHER, "provider_c", a) is None


def test_public_integration_credentials_belong_to_public() -> None:
    public = {"commerce_code": PUBLIC_A_COMMERCE_CODE, "api_key": PUBLIC_A_API_KEY}
    assert application_of(CIPHER, "provider_a", public) == PUBLIC_OWNER
    assert application_of(CIPHER, "provider_a", {**public, "api_key": "0" * 64}) is None


def test_an_owners_credential_is_its_mock_one_or_the_published_one_for_the_public_owner() -> None:
    published = "published-on-purpose"
    assert credential(CIPHER, "provider_b", PUBLIC_OWNER, "webhook_secret", published) == published
    own = credential(CIPHER, "provider_b", APP, "webhook_secret", published)
    assert own == mock_credentials(CIPHER, "provider_b", APP)["webhook_secret"] != published
