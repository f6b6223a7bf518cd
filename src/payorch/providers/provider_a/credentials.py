"""Provider A's connector credentials: the commerce code and its API key secret."""

from __future__ import annotations

from pydantic import Field, SecretStr

from payorch.providers.credentials import ConnectorCredentials
from payorch.providers.provider_a import PROVIDER_A


class ProviderACredentials(ConnectorCredentials):
    provider = PROVIDER_A
    commerce_code: str = Field(min_length=1, description="The store's commerce code (Tbk-Api-Key-Id).")
    api_key: SecretStr = Field(min_length=1, description="Its API key secret (Tbk-Api-Key-Secret).")



# A MOCK connector's deferred-capture commerce code: its application id and this suffix, the same
# key (as the provider's integration codes 597055555532 and 597055555540 share theirs).
MOCK_DEFERRED_SUFFIX = "-deferred"
