"""Fast JSON responses (orjson) and the API's error body (docs/api.md, Errors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from starlette.responses import Response

from payorch.errors import ApiError
from payorch.idempotency.records import IdempotentResult
from payorch.jsontypes import dumps

REPLAY_HEADER = "Idempotent-Replayed"


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(data), status_code=status, media_type="application/json", headers=headers)


def idempotent_response(result: IdempotentResult) -> Response:
    """An operation's answer under an Idempotency-Key; a replay says so in a header."""
    headers = {REPLAY_HEADER: "true"} if result.replayed else None
    return Response(result.body, status_code=result.status, media_type="application/json", headers=headers)


def flow_response(answer: IdempotentResult | BaseModel | Mapping[str, object]) -> Response:
    """A multi-phase operation's answer: the stored one under an Idempotency-Key, else this one."""
    if isinstance(answer, IdempotentResult):
        return idempotent_response(answer)
    return json_response(answer.model_dump() if isinstance(answer, BaseModel) else answer)


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
