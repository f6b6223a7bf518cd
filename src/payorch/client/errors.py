"""Exceptions raised by the payorch client.

    PayorchError                       every failure: code, message, request_id, details, status
     ├── PayorchConnectionError        no HTTP answer (network error, timeout); status is None
     │    └── PayorchTimeoutError
     ├── UnexpectedResponseError       an answer outside the API's contract (e.g. HTML from a proxy)
     └── ApiError                      an error body in the API's shape
          ├── InvalidRequestError      400 VALIDATION_ERROR, WEBHOOK_ENDPOINT_URL_NOT_ALLOWED;
          │                            405, 413, 415
          ├── AuthenticationError      401 AUTHENTICATION_FAILED
          ├── PermissionDeniedError    403 FORBIDDEN
          ├── NotFoundError            404 RESOURCE_NOT_FOUND
          ├── ConflictError            409
          │    ├── IdempotencyError    IDEMPOTENCY_CONFLICT, IDEMPOTENCY_KEY_IN_USE
          │    ├── InvalidStateError   INVALID_STATE (details.status)
          │    └── AlreadyExistsError  CONNECTOR_CONFIG_ALREADY_EXISTS,
          │                            WEBHOOK_DELIVERY_ALREADY_SUCCEEDED
          ├── UnprocessableError       422 CONNECTOR_NOT_CONFIGURED, CURRENCY_NOT_SUPPORTED,
          │                            REFUND_AMOUNT_EXCEEDED, CAPTURE_AMOUNT_EXCEEDED
          ├── RateLimitError           429 RATE_LIMIT_EXCEEDED (retry_after_seconds)
          ├── ServerError              500 and other 5xx
          │    ├── ProviderError       502 PROVIDER_ERROR
          │    └── ServiceUnavailableError 503 CONNECTOR_UNAVAILABLE
          │                            (retry_after_seconds)
          └── (ApiError itself for any other status)

Match on ``error.code`` for a precise case; catch a family class for a group of them.
"""

from __future__ import annotations

from typing import Any


class PayorchError(Exception):
    """Base of every client error."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "CLIENT_ERROR",
        request_id: str | None = None,
        details: dict[str, Any] | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.request_id = request_id
        self.details: dict[str, Any] = details or {}
        self.status_code = status_code

    @property
    def retry_after_seconds(self) -> float | None:
        value = self.details.get("retry_after_seconds")
        return float(value) if isinstance(value, int | float) and value >= 0 else None

    def __str__(self) -> str:
        where = f" (request_id={self.request_id})" if self.request_id else ""
        status = f"{self.status_code} " if self.status_code is not None else ""
        return f"{status}{self.code}: {self.message}{where}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, status_code={self.status_code!r}, "
            f"request_id={self.request_id!r})"
        )


class PayorchConnectionError(PayorchError):
    """The request got no HTTP answer (connection refused, reset, DNS, TLS)."""


class PayorchTimeoutError(PayorchConnectionError):
    """The request timed out: the server may or may not have processed it."""


class UnexpectedResponseError(PayorchError):
    """The server answered something outside the API's contract."""


class ApiError(PayorchError):
    """The API answered an error in its own shape (docs/api.md, Errors)."""


class InvalidRequestError(ApiError):
    pass


class AuthenticationError(ApiError):
    pass


class PermissionDeniedError(ApiError):
    pass


class NotFoundError(ApiError):
    pass


class ConflictError(ApiError):
    pass


class IdempotencyError(ConflictError):
    pass


class InvalidStateError(ConflictError):
    pass


class AlreadyExistsError(ConflictError):
    pass


class UnprocessableError(ApiError):
    pass


class RateLimitError(ApiError):
    pass


class ServerError(ApiError):
    pass


class ProviderError(ServerError):
    pass


class ServiceUnavailableError(ServerError):
    pass


_BY_CODE: dict[str, type[ApiError]] = {
    "IDEMPOTENCY_CONFLICT": IdempotencyError,
    "IDEMPOTENCY_KEY_IN_USE": IdempotencyError,
    "INVALID_STATE": InvalidStateError,
    "CONNECTOR_CONFIG_ALREADY_EXISTS": AlreadyExistsError,
    "WEBHOOK_DELIVERY_ALREADY_SUCCEEDED": AlreadyExistsError,
    "PROVIDER_ERROR": ProviderError,
    "CONNECTOR_UNAVAILABLE": ServiceUnavailableError,
    "RATE_LIMIT_EXCEEDED": RateLimitError,
}

_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: InvalidRequestError,
    409: ConflictError,
    413: InvalidRequestError,
    415: InvalidRequestError,
    422: UnprocessableError,
    429: RateLimitError,
    502: ProviderError,
    503: ServiceUnavailableError,
}


def error_class(status_code: int, code: str) -> type[ApiError]:
    if code in _BY_CODE:
        return _BY_CODE[code]
    if status_code in _BY_STATUS:
        return _BY_STATUS[status_code]
    return ServerError if status_code >= 500 else ApiError


class WebhookVerificationError(Exception):
    """A webhook notice failed verification: answer 400 and do not act on it.

    ``reason`` is one of: missing_header, bad_timestamp, timestamp_out_of_tolerance,
    bad_signature, bad_body.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
