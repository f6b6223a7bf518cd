"""Provider D's error answers (``ServiceError``: ``status``, ``errorCode`` as a string, ``message``,
``errorType``), read for the framework's ``Refusals`` (providers/refusals.py). 429 asks us to slow
down and 409 (``704``: a request with this Idempotency-Key still in progress) says try again: the
outcome is unknown for both."""

from __future__ import annotations

import httpx
from pydantic import ValidationError

from payorch.providers.provider_d import PROVIDER_D, wire
from payorch.providers.refusals import ErrorBody, Refusals

IN_PROGRESS, TOO_MANY_REQUESTS = 409, 429


def _error_body(operation: str, response: httpx.Response) -> ErrorBody:
    try:
        error = wire.ServiceError.model_validate_json(response.content)
    except ValidationError:
        error = wire.ServiceError()
    return ErrorBody(error.message, error.error_code or str(response.status_code))


rejected = Refusals(PROVIDER_D, _error_body, unknown=frozenset({IN_PROGRESS, TOO_MANY_REQUESTS}))
