"""Typed connector credentials: each provider package declares its fields as a Pydantic model
(<provider>/credentials.py); adapters read that model, never a dict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Self, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from payorch.providers.base import ConnectorContext, ProviderRejected

CredentialsModel = TypeVar("CredentialsModel", bound=BaseModel)


class ConnectorCredentials(BaseModel):
    """The base of each provider's credentials model: ``provider`` names it in errors."""

    # Values never appear in a repr or in a validation error.
    model_config = ConfigDict(extra="ignore", frozen=True, hide_input_in_errors=True)
    provider: ClassVar[str]

    @classmethod
    def of(cls, ctx: ConnectorContext) -> Self:
        """The connector's credentials; ProviderRejected when one is missing."""
        return typed_credentials(cls, cls.provider, ctx.credentials)


def typed_credentials(
    model: type[CredentialsModel], provider: str, credentials: Mapping[str, str]
) -> CredentialsModel:
    """``credentials`` as ``model``, or ProviderRejected naming the missing fields (never their
    values): a connector without them cannot talk to the provider, a definite refusal."""
    try:
        return model.model_validate(dict(credentials))
    except ValidationError as exc:
        fields = ", ".join(str(error["loc"][0]) for error in exc.errors() if error["loc"])
        raise ProviderRejected(
            f"the connector's credentials are incomplete ({fields})", provider=provider
        ) from None
