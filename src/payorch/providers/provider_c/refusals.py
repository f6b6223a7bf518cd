"""Provider C's error answers (``{"error": {"message", "code", "decline_code", "type"}}``), read
for the framework's ``Refusals`` (providers/refusals.py). A 429 is the provider asking us to slow
down: the outcome is unknown."""

from __future__ import annotations

import httpx

from payorch.providers.provider_c import PROVIDER_C, wire
from payorch.providers.refusals import ErrorBody, Refusals, error_model

TOO_MANY_REQUESTS = 429


def _error_body(operation: str, response: httpx.Response) -> ErrorBody:
    error = error_model(wire.ErrorBody, response, wire.ErrorBody(error=wire.ErrorDetail())).error
    code = error.decline_code or error.code or error.type or str(response.status_code)
    return ErrorBody(error.message, code)


rejected = Refusals(PROVIDER_C, _error_body, unknown=frozenset({TOO_MANY_REQUESTS}))
