"""Provider B's non-2xx answers, classified: a 4xx with its error body is a definite refusal
(ProviderRejected, with the provider's message and code); anything else leaves the outcome
unknown (ProviderUnavailable)."""

from __future__ import annotations

import httpx

from payorch.providers.base import ProviderRejected, ProviderUnavailable
from payorch.providers.http import json_or_none
from payorch.providers.provider_b import PROVIDER_B


def rejected(operation: str, response: httpx.Response) -> ProviderRejected | ProviderUnavailable:
    if not 400 <= response.status_code < 500:
        return ProviderUnavailable(
            f"{operation}: unexpected HTTP {response.status_code}", provider=PROVIDER_B
        )
    body = json_or_none(response)
    message = None
    code = None
    if isinstance(body, dict):
        if isinstance(body.get("message"), str):
            message = body["message"][:300]
        if isinstance(body.get("error"), str):
            code = body["error"][:64]
        causes = body.get("cause")
        if isinstance(causes, list) and causes and isinstance(causes[0], dict):
            first = causes[0]
            if first.get("code") is not None:
                code = str(first["code"])[:64]
            if not message and isinstance(first.get("description"), str):
                message = first["description"][:300]
    return ProviderRejected(
        f"{operation} refused: {message or 'HTTP ' + str(response.status_code)}",
        provider=PROVIDER_B,
        code=code,
        status_code=response.status_code,
    )
