"""Fast JSON responses (orjson) and the API's error body (docs/api.md, Errors)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from payorch.errors import ApiError
from payorch.idempotency.records import IdempotentResult

REPLAY_HEADER = "Idempotent-Replayed"


def dumps(data: Any) -> bytes:
    return orjson.dumps(data)


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(data), status_code=status, media_type="application/json", headers=headers)


def idempotent_response(result: IdempotentResult) -> Response:
    """An operation's answer under an Idempotency-Key; a replay says so in a header."""
    headers = {REPLAY_HEADER: "true"} if result.replayed else None
    return Response(result.body, status_code=result.status, media_type="application/json", headers=headers)


def error_body(error: ApiError, request_id: str) -> dict[str, Any]:
    return {
        "error": {
            "code": error.code,
            "message": error.message,
            "request_id": request_id,
            "details": error.details,
        }
    }


def error_response(error: ApiError, request_id: str) -> Response:
    # X-Request-Id is added to every response by RequestContextMiddleware.
    return json_response(error_body(error, request_id), error.status, error.headers())
