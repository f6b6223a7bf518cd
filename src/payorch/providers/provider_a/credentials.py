"""Provider A's connector credentials: the commerce code, its API key secret, and whether the code
captures at once or is configured for deferred capture (docs/providers.md, "Holding and capturing")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field, SecretStr

from payorch.providers.base import Mode
from payorch.providers.credentials import ConnectorCredentials
from payorch.providers.provider_a import PROVIDER_A

Capture = Literal["immediate", "deferred"]
IMMEDIATE: Capture = "immediate"
DEFERRED: Capture = "deferred"


class ProviderACredentials(ConnectorCredentials):
    provider = PROVIDER_A
    commerce_code: str = Field(min_length=1, description="The store's commerce code (Tbk-Api-Key-Id).")
    api_key: SecretStr = Field(min_length=1, description="Its API key secret (Tbk-Api-Key-Secret).")
    # A setting, not a secret: the provider configures each commerce code one way or the other
    # (its integration codes 597055555532 and 597055555540), and payorch cannot ask which.
    capture: Capture = Field(
        IMMEDIATE,
        description="How the commerce code captures: immediate (every approval is money taken: "
        "capture_method automatic only) or deferred (configured for deferred capture: every approval "
        "is held until captured: capture_method manual only). Default immediate.",
    )



# A MOCK connector's deferred-capture commerce code: its application id and this suffix, the same
# key (as the provider's integration codes 597055555532 and 597055555540 share theirs).
MOCK_DEFERRED_SUFFIX = "-deferred"


def capture_methods(mode: Mode, credentials: Mapping[str, str] | None) -> frozenset[str]:
    """A MOCK connector has both codes at the simulator (the application's and its deferred
    one); any other captures as its commerce code is configured."""
    if mode is Mode.MOCK:
        return frozenset({"automatic", "manual"})
    deferred = (credentials or {}).get("capture") == DEFERRED
    return frozenset({"manual"}) if deferred else frozenset({"automatic"})
