"""An answer a call did not expect, classified once for every provider (docs/providers.md,
"Writing an adapter"): a 4xx is the provider refusing (``ProviderRejected``, a definite answer,
with its words and its code); anything else, or a 4xx the provider uses for "slow down", leaves
the outcome unknown (``ProviderUnavailable``: read it back or try again later). ``http.send``
has already raised ProviderUnavailable for a timeout, a network error or a 5xx.

A provider's package says only how to read its error body (``ErrorBody``); ``Refusals`` turns
that into the error, the same way for all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from payorch.providers.base import ProviderRejected, ProviderUnavailable

MESSAGE_LIMIT = 300
CODE_LIMIT = 64
Model = TypeVar("Model", bound=BaseModel)


def error_model(model: type[Model], response: httpx.Response, empty: Model) -> Model:
    """``response``'s error body as the provider's ``model``; ``empty`` (it says nothing) for a
    body that does not read as one."""
    try:
        return model.model_validate_json(response.content)
    except ValidationError:
        return empty


@dataclass(frozen=True, slots=True)
class ErrorBody:
    """What a provider's error answer says: its words and its own code (None: it says none)."""

    message: str | None = None
    code: str | None = None
    # The whole reason, where the provider's code means more than its words (else the reason is
    # "<operation> refused: <message>").
    reason: str | None = None


# Reads one provider's error body for ``operation`` (never raises: a body it cannot read says
# nothing, ErrorBody()).
ErrorReader = Callable[[str, httpx.Response], ErrorBody]


@dataclass(frozen=True, slots=True)
class Refusals:
    """One provider's classification of the answers a call did not expect."""

    provider: str
    read: ErrorReader
    # 4xx statuses that refuse nothing definite (429: the provider asks us to slow down).
    unknown: frozenset[int] = frozenset()

    def __call__(self, operation: str, response: httpx.Response) -> ProviderRejected | ProviderUnavailable:
        status = response.status_code
        if not 400 <= status < 500 or status in self.unknown:
            return ProviderUnavailable(
                f"{operation}: unexpected HTTP {status}", provider=self.provider, code=str(status)
            )
        said = self.read(operation, response)
        message = said.message[:MESSAGE_LIMIT] if said.message else None
        return ProviderRejected(
            said.reason or f"{operation} refused: {message or f'HTTP {status}'}",
            provider=self.provider,
            code=said.code[:CODE_LIMIT] if said.code is not None else None,
            status_code=status,
        )
