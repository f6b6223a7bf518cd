"""Why an attempt failed, in words a receiver's team can act on (docs/webhooks.md, Retries).

``error`` (timeout, network_error, unexpected_status, url_not_allowed) stays as it was; each
failed attempt also gets a ``failure_reason`` and a short ``failure_message``:

- dns_error: no longer recorded (a name that does not resolve is url_not_allowed, like one
  that resolves to a refused address: one reason, so names cannot be probed); kept for old rows;
- connection_refused: nothing listens at the address and port;
- connection_reset: the connection was reset or closed before a complete answer;
- timeout: no complete answer within PAYORCH_WEBHOOK_TIMEOUT_SECONDS (said in the message);
- tls_error: the TLS handshake failed (e.g. the certificate does not verify);
- http_status: an answer other than 2xx (its code in the message; 3xx: redirects not followed);
- url_not_allowed: the URL's address is refused (the rule in the message);
- network_error: any other network failure (its kind in the message).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Literal, get_args

from payorch.webhooks import urls
from payorch.webhooks.http1 import HttpError

CONNECTION_REFUSED = "connection_refused"
CONNECTION_RESET = "connection_reset"
TIMEOUT = "timeout"
TLS_ERROR = "tls_error"
HTTP_STATUS = "http_status"
URL_NOT_ALLOWED = "url_not_allowed"
NETWORK_ERROR = "network_error"
FailureReason = Literal[
    "dns_error",
    "connection_refused",
    "connection_reset",
    "timeout",
    "tls_error",
    "http_status",
    "url_not_allowed",
    "network_error",
]
REASONS: tuple[str, ...] = get_args(FailureReason)
MESSAGE_CHARS = 300  # the column's width


@dataclass(frozen=True, slots=True)
class Failure:
    reason: str
    message: str


def _short(text: str) -> str:
    return text[:MESSAGE_CHARS]


def timed_out(seconds: float) -> Failure:
    return Failure(TIMEOUT, f"no complete answer within {seconds:g} s")


def status(code: int) -> Failure:
    if 300 <= code < 400:
        return Failure(HTTP_STATUS, f"HTTP {code}: a redirect (redirects are not followed)")
    return Failure(HTTP_STATUS, f"HTTP {code}: not a 2xx answer")


def refused_url(error: urls.UrlNotAllowed) -> Failure:
    return Failure(URL_NOT_ALLOWED, _short(f"the URL is not allowed: {error.details.get('reason')}"))


def network(error: BaseException) -> Failure:
    """A failure of the connection itself (HttpError from http1, or an OSError)."""
    cause = error.cause if isinstance(error, HttpError) and error.cause is not None else error
    if isinstance(cause, ssl.SSLCertVerificationError):
        detail = cause.verify_message or cause.reason or "the certificate does not verify"
        return Failure(TLS_ERROR, _short(f"TLS: the certificate does not verify ({detail})"))
    if isinstance(cause, ssl.SSLError):
        return Failure(TLS_ERROR, _short(f"TLS handshake failed ({cause.reason or cause})"))
    if isinstance(cause, ConnectionRefusedError):
        return Failure(CONNECTION_REFUSED, "connection refused (nothing listens at that port)")
    if isinstance(cause, ConnectionResetError | BrokenPipeError):
        return Failure(CONNECTION_RESET, "the connection was reset before a complete answer")
    if isinstance(cause, HttpError):
        text = str(cause)
        if text.startswith("connection closed"):
            return Failure(CONNECTION_RESET, _short(text))
        return Failure(NETWORK_ERROR, _short(text))
    return Failure(NETWORK_ERROR, _short(f"{cause.__class__.__name__}: {cause}".rstrip(": ")))
