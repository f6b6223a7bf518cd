"""Provider C's non-2xx answers, classified: a 4xx with its error body is a definite refusal
(ProviderRejected, with the provider's message and code); anything else leaves the outcome
unknown (ProviderUnavailable). A 429 is the provider asking us to slow down: unknown too."""

from __future__ import annotations

import httpx
from pydantic import ValidationError

from payorch.providers.base import ProviderRejected, ProviderUnavailable
from payorch.providers.provider_c import PROVIDER_C, wire


def rejected(operation: str, response: httpx.Response) -> ProviderRejected | ProviderUnavailable:
    status = response.status_code
    if not 400 <= status < 500 or status == 429:
        return ProviderUnavailable(
            f"{operation}: unexpected HTTP {status}", provider=PROVIDER_C, code=str(status)
        )
    try:
        error = wire.ErrorBody.model_validate_json(response.content).error
    except ValidationError:
        error = wire.ErrorDetail()
    message = (error.message or f"HTTP {status}")[:300]
    return ProviderRejected(
        f"{operation} refused: {message}",
        provider=PROVIDER_C,
        code=(error.decline_code or error.code or error.type or str(status))[:64],
        status_code=status,
    )
