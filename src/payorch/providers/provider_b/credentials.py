"""Provider B's connector credentials: the API access token and the notification secret."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from payorch.providers import PROVIDER_B
from payorch.providers.base import ConnectorContext
from payorch.providers.credentials import typed_credentials


class ProviderBCredentials(BaseModel):
    # Values never appear in a repr or in a validation error.
    model_config = ConfigDict(extra="ignore", frozen=True, hide_input_in_errors=True)

    access_token: SecretStr = Field(min_length=1)
    webhook_secret: SecretStr = Field(min_length=1)


def credentials_of(ctx: ConnectorContext) -> ProviderBCredentials:
    """The connector's credentials; ProviderRejected when one is missing."""
    return typed_credentials(ProviderBCredentials, PROVIDER_B, ctx.credentials)
