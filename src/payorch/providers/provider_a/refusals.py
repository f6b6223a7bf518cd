"""Provider A's error answers (``{"error_message": ...}``, sometimes a ``response_code``), read for
the framework's ``Refusals`` (providers/refusals.py). A refund's refusal is named by its code,
which the provider may only give inside its message."""

from __future__ import annotations

import re

import httpx

from payorch.providers.http import json_or_none
from payorch.providers.provider_a import PROVIDER_A, wire
from payorch.providers.refusals import ErrorBody, Refusals

_CODE_IN_MESSAGE = re.compile(r"\b(16|53|284|310|311)\b")


def error_message(response: httpx.Response) -> str | None:
    body = json_or_none(response)
    if isinstance(body, dict) and isinstance(body.get("error_message"), str):
        return str(body["error_message"])[:300]
    return None


def refund_reason(code: int | None, message: str | None) -> str:
    if code is not None and code in wire.REFUND_ERRORS:
        return f"{wire.REFUND_ERRORS[code]} (code {code})"
    return message or (f"refund refused (code {code})" if code is not None else "refund refused")


def _error_body(operation: str, response: httpx.Response) -> ErrorBody:
    body = json_or_none(response)
    message = error_message(response)
    code: int | None = None
    if isinstance(body, dict) and isinstance(body.get("response_code"), int):
        code = body["response_code"]
    elif operation == "refund" and message and (found := _CODE_IN_MESSAGE.search(message)):
        code = int(found.group(1))
    return ErrorBody(
        message,
        str(code) if code is not None else None,
        refund_reason(code, message) if operation == "refund" else None,
    )


rejected = Refusals(PROVIDER_A, _error_body)
