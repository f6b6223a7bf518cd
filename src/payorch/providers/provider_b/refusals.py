"""Provider B's error answers (``{"message", "error", "cause": [{"code", "description"}]}``),
read for the framework's ``Refusals`` (providers/refusals.py)."""

from __future__ import annotations

import httpx

from payorch.providers.http import json_or_none
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.refusals import ErrorBody, Refusals


def _error_body(operation: str, response: httpx.Response) -> ErrorBody:
    body = json_or_none(response)
    message = None
    code = None
    if isinstance(body, dict):
        if isinstance(body.get("message"), str):
            message = body["message"]
        if isinstance(body.get("error"), str):
            code = body["error"]
        causes = body.get("cause")
        if isinstance(causes, list) and causes and isinstance(causes[0], dict):
            first = causes[0]
            if first.get("code") is not None:
                code = str(first["code"])
            if not message and isinstance(first.get("description"), str):
                message = first["description"]
    return ErrorBody(message, code)


rejected = Refusals(PROVIDER_B, _error_body)
