"""Typed connector credentials: each provider package declares its fields as a Pydantic model
(provider_a/credentials.py, provider_b/credentials.py); adapters read that model, never a dict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from payorch.providers.base import ProviderRejected

CredentialsModel = TypeVar("CredentialsModel", bound=BaseModel)


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
