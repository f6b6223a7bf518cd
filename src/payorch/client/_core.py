"""What the sync and async clients share: the request of each operation, retries, decoding.

The two clients only differ in how they send and sleep; everything that decides (which key,
whether and how long to wait, what an answer means) lives here once.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from payorch.client.errors import (
    PayorchConnectionError,
    PayorchError,
    PayorchTimeoutError,
    UnexpectedResponseError,
    error_class,
)
from payorch.client.models import Page

M = TypeVar("M", bound=BaseModel)

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
USER_AGENT = "payorch-python"
# Methods the API treats as safe to repeat whatever happened to the first attempt.
_REPLAYABLE_METHODS = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})
_RETRYABLE_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff.

    ``max_attempts`` counts the first try. A server-given wait (``details.retry_after_seconds``
    or ``Retry-After``) is honoured as is, unless it exceeds ``max_retry_after``: then the
    error is raised at once rather than blocking the caller for that long.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    jitter: bool = True

    def backoff(self, attempt: int) -> float:
        delay = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return float(delay * random.uniform(0.5, 1.0)) if self.jitter else float(delay)  # noqa: S311 - not crypto


NO_RETRIES = RetryPolicy(max_attempts=1)


@dataclass(frozen=True)
class Call:
    """One API operation: built once, sent one or more times with the same Idempotency-Key."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    # POST endpoints that deduplicate by Idempotency-Key (intent, checkout, refund): a retry
    # after an unknown outcome (timeout) cannot create twice.
    server_idempotent: bool = False
    idempotency_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def replay_safe(self) -> bool:
        return self.method in _REPLAYABLE_METHODS or self.server_idempotent


def segment(value: str) -> str:
    """A path parameter, quoted so an id can never change the path it is put into."""
    if not isinstance(value, str) or not value:
        raise ValueError("an id must be a non-empty string")
    return quote(value, safe="")


def clean(values: Mapping[str, Any]) -> dict[str, Any]:
    """Drop unset (None) values; render dates as ISO 8601."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, datetime | date):
            value = value.isoformat()
        out[key] = value
    return out


def post(
    path: str, body: Any, *, idempotency_key: str | None, server_idempotent: bool = False
) -> Call:
    """A POST with its Idempotency-Key fixed now, so every retry of this operation reuses it."""
    return Call(
        "POST",
        path,
        json=body,
        server_idempotent=server_idempotent,
        idempotency_key=idempotency_key or str(uuid.uuid4()),
    )


def request_headers(call: Call) -> dict[str, str]:
    headers = dict(call.headers)
    if call.idempotency_key is not None:
        headers["Idempotency-Key"] = call.idempotency_key
    return headers


def network_error(exc: httpx.TransportError) -> PayorchConnectionError:
    if isinstance(exc, httpx.TimeoutException):
        return PayorchTimeoutError(f"Timed out: {type(exc).__name__}", code="TIMEOUT")
    return PayorchConnectionError(
        f"Network error: {type(exc).__name__}: {exc}", code="NETWORK_ERROR"
    )


def _never_sent(exc: httpx.TransportError) -> bool:
    """The request provably did not reach the server, so it cannot have had any effect."""
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


def retry_delay(
    policy: RetryPolicy,
    call: Call,
    attempt: int,
    *,
    error: PayorchError | None = None,
    transport_error: httpx.TransportError | None = None,
) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or None to give up and raise."""
    if attempt >= policy.max_attempts:
        return None
    if transport_error is not None:
        if call.replay_safe or _never_sent(transport_error):
            return policy.backoff(attempt)
        return None
    if error is None or error.status_code is None:
        return None
    retryable = error.status_code in _RETRYABLE_STATUSES or error.code == "IDEMPOTENCY_KEY_IN_USE"
    if not retryable:
        return None
    wait = error.retry_after_seconds
    if wait is None:
        return policy.backoff(attempt)
    return wait if wait <= policy.max_retry_after else None


def decode(response: httpx.Response) -> Any:
    """The JSON of a 2xx answer (None for 204); raise the typed error of any other."""
    request_id = response.headers.get("x-request-id")
    if 200 <= response.status_code < 300:
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise UnexpectedResponseError(
                "The success answer is not JSON.",
                code="UNEXPECTED_RESPONSE",
                request_id=request_id,
                status_code=response.status_code,
            ) from None
    raise api_error(response)


def api_error(response: httpx.Response) -> PayorchError:
    request_id = response.headers.get("x-request-id")
    try:
        body = response.json()
        error = body["error"]
        code, message = str(error["code"]), str(error["message"])
        details = error.get("details") or {}
        request_id = str(error.get("request_id") or request_id or "") or None
    except (ValueError, KeyError, TypeError):
        return UnexpectedResponseError(
            f"HTTP {response.status_code} without an error body in the API's shape.",
            code="UNEXPECTED_RESPONSE",
            request_id=request_id,
            details=_retry_after_header(response),
            status_code=response.status_code,
        )
    if "retry_after_seconds" not in details:
        details = {**details, **_retry_after_header(response)}
    cls = error_class(response.status_code, code)
    return cls(
        message, code=code, request_id=request_id, details=details, status_code=response.status_code
    )


def _retry_after_header(response: httpx.Response) -> dict[str, Any]:
    value = response.headers.get("retry-after", "")
    return {"retry_after_seconds": int(value)} if value.isdigit() else {}


class Lines:
    """A streamed text body cut into lines as a text file gives them, each with its "\n" (and a
    "\r" before it): ``csv.reader`` takes them as they are, a quoted line break included, and
    ``json.loads`` takes each JSON line. Only "\n" ends a line (str.splitlines, and so httpx's
    ``iter_lines``, also cut at "\r", "\x1c" or "\u2028" inside a value)."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> list[str]:
        *complete, self._pending = (self._pending + text).split("\n")
        return [line + "\n" for line in complete]

    def end(self) -> list[str]:
        last, self._pending = self._pending, ""
        return [last] if last else []


def unwrap(data: Any) -> Any:
    """Undo the ``{success, data}`` envelope some administration answers use."""
    if isinstance(data, dict) and "data" in data and "success" in data:
        return data["data"]
    return data


def parse(model: type[M], data: Any) -> M:
    try:
        return model.model_validate(unwrap(data))
    except ValidationError as exc:
        raise _unexpected(model, exc) from None


def parse_list(model: type[M], data: Any) -> list[M]:
    data = unwrap(data)
    if isinstance(data, dict) and "items" in data:
        data = data["items"]
    if not isinstance(data, list):
        raise UnexpectedResponseError("Expected a list.", code="UNEXPECTED_RESPONSE")
    try:
        return [model.model_validate(item) for item in data]
    except ValidationError as exc:
        raise _unexpected(model, exc) from None


def _unexpected(model: type[BaseModel], exc: ValidationError) -> UnexpectedResponseError:
    return UnexpectedResponseError(
        f"The answer is not a valid {model.__name__}: {exc.errors()[0].get('msg')}",
        code="UNEXPECTED_RESPONSE",
    )


def parse_page(model: type[M], data: Any) -> Page[M]:
    data = unwrap(data)
    cursor = data.get("next_cursor") if isinstance(data, dict) else None
    return Page[model](items=parse_list(model, data), next_cursor=cursor)  # type: ignore[valid-type]
