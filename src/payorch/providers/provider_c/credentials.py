"""Provider C's connector credentials: the API secret key and the events' signing secret."""

from __future__ import annotations

from pydantic import Field, SecretStr

from payorch.providers.credentials import ConnectorCredentials
from payorch.providers.provider_c import PROVIDER_C


class ProviderCCredentials(ConnectorCredentials):
    provider = PROVIDER_C
    secret_key: SecretStr = Field(
        min_length=1, description="The API secret key (sk_test_... in SANDBOX, sk_live_... in PRODUCTION)."
    )
    webhook_secret: SecretStr = Field(
        min_length=1, description="The signing secret (whsec_...) of the endpoint that receives its events."
    )
