"""Provider A's connector credentials: the commerce code and its API key secret."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from payorch.providers import PROVIDER_A
from payorch.providers.base import ConnectorContext
from payorch.providers.credentials import typed_credentials


class ProviderACredentials(BaseModel):
    # Values never appear in a repr or in a validation error.
    model_config = ConfigDict(extra="ignore", frozen=True, hide_input_in_errors=True)

    commerce_code: str = Field(min_length=1)
    api_key: SecretStr = Field(min_length=1)


def credentials_of(ctx: ConnectorContext) -> ProviderACredentials:
    """The connector's credentials; ProviderRejected when one is missing."""
    return typed_credentials(ProviderACredentials, PROVIDER_A, ctx.credentials)
