"""Render every failure once, in the API's error shape: ApiErrors, validation, routing, crashes."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from payorch.db.unavailable import OWN_DATABASE_HEADER
from payorch.errors import (
    ApiError,
    AuthenticationFailed,
    DatabaseUnavailable,
    IdempotencyConflict,
    IdempotencyKeyInUse,
    InternalError,
    InvalidState,
    MethodNotAllowed,
    PayloadTooLarge,
    ResourceNotFound,
    UnsupportedMediaType,
    ValidationFailed,
    validator_message,
)
from payorch.http.context import IN_PROCESS
from payorch.http.responses import error_response
from payorch.http.schemas import ErrorEnvelope

log = logging.getLogger("payorch.http")


def request_id_of(request: Request) -> str:
    return str(getattr(request.state, "request_id", "-"))


def validation_error(exc: RequestValidationError) -> ValidationFailed:
    problems: list[tuple[str, str]] = []
    for item in exc.errors():
        loc = [str(part) for part in item.get("loc", ())]
        if loc and loc[0] in ("body", "query", "path", "header"):
            source, loc = loc[0], loc[1:]
        else:
            source = "body"
        if item.get("type") == "json_invalid":
            return ValidationFailed.field("body", "Malformed JSON.")
        if source == "query" and loc:
            loc = loc[:1]  # the parameter's name, also for the n-th value of a repeated one
        field = ".".join(loc) or source
        message = validator_message(str(item.get("msg", "invalid")))
        if item.get("type") == "extra_forbidden":
            message = "Unknown query parameter." if source == "query" else "Unknown field."
        problems.append((field, message))
    return ValidationFailed.listing(problems)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route answers on the request's path, asked of the router itself (a
    path's GET and POST are separate routes, possibly in included routers)."""
    routes = request.app.router.routes
    return [
        method
        for method in _METHODS
        if any(route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes)
    ]


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        answer = error_response(exc, request_id_of(request))
        if isinstance(exc, DatabaseUnavailable) and request.scope.get(IN_PROCESS):
            answer.headers[OWN_DATABASE_HEADER] = "unavailable"  # payorch.db.unavailable
        return answer

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        return error_response(validation_error(exc), request_id_of(request))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        mapped: dict[int, ApiError] = {
            404: ResourceNotFound("No such route."),
            405: MethodNotAllowed(allowed_methods(request)),
            413: PayloadTooLarge(),
            415: UnsupportedMediaType(),
        }
        error = mapped.get(exc.status_code)
        if getattr(request.state, "body_too_large", False):
            error = PayloadTooLarge()
        elif getattr(request.state, "body_has_nul", False):
            error = ValidationFailed.field("body", "NUL characters are not accepted.")
        if error is None:
            if exc.status_code == 400:
                error = ValidationFailed(str(exc.detail))
            else:
                log.error("unexpected HTTP exception %s", exc.status_code)
                error = InternalError()
        return error_response(error, request_id_of(request))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error", extra={"request_id": request_id_of(request)})
        return error_response(InternalError(), request_id_of(request))


# What every operation that moves an existing intent or payment (checkout, cancel, refund) can
# answer before its own errors: bad input, no key, not found, the wrong status, a reused key.
MOVE_PROBLEMS: tuple[type[ApiError], ...] = (
    ValidationFailed,
    AuthenticationFailed,
    ResourceNotFound,
    InvalidState,
    IdempotencyConflict,
    IdempotencyKeyInUse,
)


def problem_responses(*errors: type[ApiError]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for the errors an endpoint can answer."""
    out: dict[int | str, dict[str, Any]] = {}
    for error in errors:
        entry = out.setdefault(error.status, {"model": ErrorEnvelope, "description": ""})
        entry["description"] = (entry["description"] + " " + error.code).strip()
    return out
