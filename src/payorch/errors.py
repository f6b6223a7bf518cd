"""The one ApiError family. Raised anywhere, rendered once at the edge (payorch.http.errors).

    ApiError
     ├── ValidationFailed            400 VALIDATION_ERROR
     ├── MalformedRequest            400 MALFORMED_REQUEST (answered by the HTTP server protocol)
     ├── WebhookEndpointUrlNotAllowed 400 WEBHOOK_ENDPOINT_URL_NOT_ALLOWED
     ├── AuthenticationFailed        401 AUTHENTICATION_FAILED
     ├── Forbidden                   403 FORBIDDEN
     ├── ResourceNotFound            404 RESOURCE_NOT_FOUND
     ├── MethodNotAllowed            405 METHOD_NOT_ALLOWED
     ├── RequestTimeout              408 REQUEST_TIMEOUT (answered by the HTTP server protocol)
     ├── InvalidState                409 INVALID_STATE
     ├── IdempotencyConflict         409 IDEMPOTENCY_CONFLICT
     ├── IdempotencyKeyInUse         409 IDEMPOTENCY_KEY_IN_USE
     ├── ConnectorConfigAlreadyExists 409 CONNECTOR_CONFIG_ALREADY_EXISTS
     ├── WebhookDeliveryAlreadySucceeded 409 WEBHOOK_DELIVERY_ALREADY_SUCCEEDED
     ├── LimitExceeded               409 LIMIT_EXCEEDED
     ├── PaymentDisputed             409 PAYMENT_DISPUTED
     ├── PayloadTooLarge             413 PAYLOAD_TOO_LARGE
     ├── UriTooLong                  414 URI_TOO_LONG (answered by the HTTP server protocol)
     ├── UnsupportedMediaType        415 UNSUPPORTED_MEDIA_TYPE
     ├── ConnectorNotConfigured      422 CONNECTOR_NOT_CONFIGURED
     ├── CurrencyNotSupported        422 CURRENCY_NOT_SUPPORTED
     ├── CaptureMethodNotSupported   422 CAPTURE_METHOD_NOT_SUPPORTED
     ├── CaptureAmountExceeded       422 CAPTURE_AMOUNT_EXCEEDED
     ├── RefundAmountExceeded        422 REFUND_AMOUNT_EXCEEDED
     ├── RateLimitExceeded           429 RATE_LIMIT_EXCEEDED
     ├── RequestHeaderFieldsTooLarge 431 REQUEST_HEADER_FIELDS_TOO_LARGE (answered by the HTTP server)
     ├── InternalError               500 INTERNAL_ERROR
     ├── ProviderError               502 PROVIDER_ERROR
     ├── ConnectorUnavailable        503 CONNECTOR_UNAVAILABLE
     └── ServiceUnavailable          503 SERVICE_UNAVAILABLE (answered by the HTTP server protocol)
          └── DatabaseUnavailable    503 SERVICE_UNAVAILABLE (the database unreachable, a connection lost)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar


class ApiError(Exception):
    status: ClassVar[int] = 500
    code: ClassVar[str] = "INTERNAL_ERROR"
    default_message: ClassVar[str] = "Internal error."

    def __init__(self, message: str | None = None, details: dict[str, Any] | None = None) -> None:
        self.message = message or self.default_message
        self.details = details or {}
        super().__init__(self.message)

    def headers(self) -> dict[str, str]:
        return {}


class ValidationFailed(ApiError):
    status, code, default_message = 400, "VALIDATION_ERROR", "The request is not valid."

    # At most this many problems are listed, and a field's path is cut to this many characters:
    # the answer stays small however many problems the request holds (docs/api.md, Errors).
    MAX_LISTED: ClassVar[int] = 10
    MAX_FIELD_CHARS: ClassVar[int] = 100

    @classmethod
    def field(cls, field: str, message: str) -> ValidationFailed:
        return cls.listing([(field, message)])

    @classmethod
    def listing(cls, problems: Sequence[tuple[str, str]]) -> ValidationFailed:
        """Every (field, message) found: the first MAX_LISTED in ``errors``, the count of the rest
        in ``more_errors``; the message is the first problem."""
        listed = [
            {"field": _cut(field, cls.MAX_FIELD_CHARS), "message": text}
            for field, text in problems[: cls.MAX_LISTED]
        ]
        first = listed[0] if listed else {"field": "body", "message": "invalid"}
        more = max(0, len(problems) - cls.MAX_LISTED)
        return cls(f"{first['field']}: {first['message']}", {"errors": listed, "more_errors": more})


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


class MalformedRequest(ApiError):
    status, code = 400, "MALFORMED_REQUEST"
    default_message = "The request is not valid HTTP/1.1 and was refused before reaching the API."


class WebhookEndpointUrlNotAllowed(ApiError):
    status, code = 400, "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED"
    default_message = "The webhook URL is not allowed for this application's environment."


class AuthenticationFailed(ApiError):
    status, code = 401, "AUTHENTICATION_FAILED"
    default_message = "A valid API key is required: send Authorization: Bearer <API_KEY>."

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": "Bearer"}


class Forbidden(ApiError):
    status, code = 403, "FORBIDDEN"
    default_message = "This application's environment does not allow the operation."


class ResourceNotFound(ApiError):
    status, code, default_message = 404, "RESOURCE_NOT_FOUND", "No such resource."


class MethodNotAllowed(ApiError):
    status, code, default_message = 405, "METHOD_NOT_ALLOWED", "Method not allowed on this path."

    def __init__(self, allowed: Sequence[str] = ()) -> None:
        """``allowed``: the path's methods, in the `Allow` header RFC 9110 requires and in details."""
        self.allowed = tuple(allowed)
        message = f"Method not allowed on this path; use {', '.join(self.allowed)}." if allowed else None
        super().__init__(message, {"allowed_methods": list(self.allowed)} if allowed else None)

    def headers(self) -> dict[str, str]:
        return {"Allow": ", ".join(self.allowed)}


class RequestTimeout(ApiError):
    status, code = 408, "REQUEST_TIMEOUT"
    default_message = "The request's headers or body did not arrive in time."


class InvalidState(ApiError):
    status, code = 409, "INVALID_STATE"
    default_message = "The operation is not allowed in the resource's current status."

    def __init__(self, status: str, message: str | None = None, *, allowed: Sequence[str]) -> None:
        """``allowed``: the statuses in which the operation is possible, named in the message so
        the caller knows what to wait for or fix (empty when the refusal is not about a status)."""
        text = message or f"Not allowed while the status is {status}."
        if allowed:
            text += f" Allowed only while the status is {_either(allowed)}."
        super().__init__(text, {"status": status, "allowed_statuses": list(allowed)})


def _either(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


class IdempotencyConflict(ApiError):
    status, code = 409, "IDEMPOTENCY_CONFLICT"
    default_message = "This Idempotency-Key was already used with a different request."


class IdempotencyKeyInUse(ApiError):
    status, code = 409, "IDEMPOTENCY_KEY_IN_USE"
    default_message = "A request with this Idempotency-Key is still being processed."

    def __init__(self, retry_after_seconds: int = 1) -> None:
        super().__init__(None, {"retry_after_seconds": retry_after_seconds})

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.details["retry_after_seconds"])}


class ConnectorConfigAlreadyExists(ApiError):
    status, code = 409, "CONNECTOR_CONFIG_ALREADY_EXISTS"
    default_message = "The merchant already has a configuration for this provider; PATCH it."


class WebhookDeliveryAlreadySucceeded(ApiError):
    status, code = 409, "WEBHOOK_DELIVERY_ALREADY_SUCCEEDED"
    default_message = "This delivery already succeeded."


class LimitExceeded(ApiError):
    status, code = 409, "LIMIT_EXCEEDED"
    default_message = "The application already has as many of these as it may."

    def __init__(self, what: str, *, limit: int, current: int, remedy: str) -> None:
        """``what``: the things counted ("webhook endpoints"); ``remedy``: what frees one."""
        super().__init__(
            f"The application has {current} {what}; at most {limit} are allowed. {remedy}",
            {"limit": limit, "current": current},
        )


class PaymentDisputed(ApiError):
    status, code = 409, "PAYMENT_DISPUTED"
    default_message = "The payment is disputed: it cannot be refunded."

    def __init__(self, dispute_status: str, dispute_kind: str | None) -> None:
        """A refund of a payment whose dispute is OPEN (the money is held) or LOST (it went back
        to the buyer through the dispute): refunding it would return the money twice."""
        what = dispute_kind or "dispute"
        reason = (
            f"A {what} of this payment is open: the provider holds its money until the {what} "
            "ends. Refund what is left after it is won."
            if dispute_status == "OPEN"
            else f"A {what} of this payment was lost: its money already went back to the buyer."
        )
        super().__init__(
            f"The payment cannot be refunded. {reason}",
            {"dispute_status": dispute_status, "dispute_kind": dispute_kind},
        )


class PayloadTooLarge(ApiError):
    status, code, default_message = 413, "PAYLOAD_TOO_LARGE", "The body exceeds 64 KiB."


class UriTooLong(ApiError):
    status, code = 414, "URI_TOO_LONG"

    def __init__(self, max_url_bytes: int) -> None:
        super().__init__(
            f"The URL is longer than {max_url_bytes} bytes; the request was refused before reaching the API.",
            {"max_url_bytes": max_url_bytes},
        )


class UnsupportedMediaType(ApiError):
    status, code = 415, "UNSUPPORTED_MEDIA_TYPE"
    default_message = "Send JSON bodies with Content-Type: application/json."


class ConnectorNotConfigured(ApiError):
    status, code = 422, "CONNECTOR_NOT_CONFIGURED"
    default_message = "The requested provider is not enabled for this merchant."


class CurrencyNotSupported(ApiError):
    """An explicit provider that does not take the currency: not a configuration the merchant can
    fix, so not CONNECTOR_NOT_CONFIGURED."""

    status, code = 422, "CURRENCY_NOT_SUPPORTED"

    def __init__(self, provider: str, currency: str, supported: Sequence[str]) -> None:
        super().__init__(
            f"The provider {provider} does not support {currency}; it takes {', '.join(supported)}.",
            {"provider": provider, "currency": currency, "supported_currencies": list(supported)},
        )


class CaptureMethodNotSupported(ApiError):
    """A manual-capture intent naming a provider that cannot hold money, or a provider whose
    connector for the merchant takes the other capture method (docs/providers.md, "Holding and
    capturing")."""

    status, code = 422, "CAPTURE_METHOD_NOT_SUPPORTED"

    def __init__(
        self,
        provider: str,
        holding: Sequence[str],
        *,
        capture_method: str = "manual",
        connector: str | None = None,
    ) -> None:
        if connector is not None:  # the provider can; the merchant's connector is set up otherwise
            super().__init__(
                f"The provider {provider} cannot take capture_method {capture_method}: {connector}.",
                {"provider": provider, "capture_method": capture_method, "reason": connector},
            )
            return
        needs = _either(list(holding)) if holding else "a provider that can hold"
        super().__init__(
            f"The provider {provider} cannot hold a payment for a later capture: it captures every "
            f"approved payment at once. capture_method manual needs {needs}.",
            {"provider": provider, "capture_method": "manual", "providers_that_hold": list(holding)},
        )


class CaptureAmountExceeded(ApiError):
    status, code = 422, "CAPTURE_AMOUNT_EXCEEDED"
    default_message = "The capture exceeds what the hold allows."


class RefundAmountExceeded(ApiError):
    status, code = 422, "REFUND_AMOUNT_EXCEEDED"
    default_message = "The refund exceeds what is left to refund."


class RateLimitExceeded(ApiError):
    status, code, default_message = 429, "RATE_LIMIT_EXCEEDED", "Too many requests."

    def __init__(self, retry_after_seconds: int) -> None:
        super().__init__(None, {"retry_after_seconds": retry_after_seconds})

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.details["retry_after_seconds"])}


class RequestHeaderFieldsTooLarge(ApiError):
    status, code = 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"
    default_message = "The request's headers are too large."

    @classmethod
    def size(cls, max_header_bytes: int) -> RequestHeaderFieldsTooLarge:
        return cls(
            f"The request line and headers exceed {max_header_bytes} bytes; the request was refused "
            "before reaching the API.",
            {"max_header_bytes": max_header_bytes},
        )

    @classmethod
    def count(cls, max_header_count: int) -> RequestHeaderFieldsTooLarge:
        return cls(
            f"The request has more than {max_header_count} headers; it was refused before reaching the API.",
            {"max_header_count": max_header_count},
        )


class InternalError(ApiError):
    status, code, default_message = 500, "INTERNAL_ERROR", "Internal error."


class ProviderError(ApiError):
    status, code = 502, "PROVIDER_ERROR"
    default_message = "The provider failed or gave an answer that could not be used."


class ConnectorUnavailable(ApiError):
    status, code = 503, "CONNECTOR_UNAVAILABLE"
    default_message = "No provider of the merchant is available at the moment; retry later."

    def __init__(self, retry_after_seconds: int, message: str | None = None) -> None:
        super().__init__(message, {"retry_after_seconds": retry_after_seconds})

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.details["retry_after_seconds"])}


class ServiceUnavailable(ApiError):
    status, code = 503, "SERVICE_UNAVAILABLE"
    default_message = "The server holds too many open connections; retry later."

    def __init__(self, retry_after_seconds: int) -> None:
        super().__init__(None, {"retry_after_seconds": retry_after_seconds})

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.details["retry_after_seconds"])}


class DatabaseUnavailable(ServiceUnavailable):
    """Raised by payorch.db when the database cannot be reached or a connection was lost."""

    default_message = (
        "The database is unavailable at the moment; retry later (a write with the same Idempotency-Key)."
    )


# Pydantic prefixes the text of a validator's ValueError/AssertionError; the reader needs only
# the text, which says what to fix.
_VALIDATOR_PREFIXES = ("Value error, ", "Assertion failed, ")


def validator_message(message: str) -> str:
    """A validation library's message without its "Value error, " kind of prefix."""
    for prefix in _VALIDATOR_PREFIXES:
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message
