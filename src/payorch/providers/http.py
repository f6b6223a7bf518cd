"""One way to call a provider: explicit timeout, failure classification, edge parsing.

``send`` raises ProviderUnavailable for a timeout, a network error or a 5xx and returns every
other answer (the adapter decides which 4xx are definite). ``parse`` turns a body into the
provider's wire model, or ProviderUnavailable when it cannot (a garbage answer tells nothing).

The timeout is ``asyncio.timeout`` around the whole call, because httpx does not enforce its
own timeouts on in-process ASGI calls (MOCK mode reaches the simulator that way). Logs name the
operation and the status, never the URL (it can carry a token) nor any header (credentials).
Every call is also timed into /metrics by provider and operation, a failure counted by kind
(observability/metrics.py): ``timeout``, ``network``, ``http_5xx`` (unavailable), ``http_4xx``
(the provider refused; the adapter decides whether that is definite), ``error`` (crashed
in-process) and, from ``parse``, ``invalid_response``. While tracing is on, each call is also a
span with the same outcome and the HTTP status (observability/tracing.py).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Mapping
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from payorch.db.unavailable import OWN_DATABASE_HEADER, RETRY_AFTER_SECONDS
from payorch.errors import DatabaseUnavailable
from payorch.observability import timing, tracing
from payorch.observability.metrics import observe_provider_call, record_provider_error
from payorch.providers.base import ConnectorContext, ProviderUnavailable

logger = logging.getLogger("payorch.providers")
_FAILURES = frozenset({"timeout", "network", "http_5xx", "error"})


class _RedactTokens(logging.Filter):
    """httpx logs every request URL at INFO; provider A's URLs carry the transaction token."""

    _TOKEN_PATH = re.compile(r"(/transactions/)[^/\s\"?]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.msg = record.getMessage()
            record.args = None
        record.msg = self._TOKEN_PATH.sub(r"\1***", str(record.msg))
        return True


logging.getLogger("httpx").addFilter(_RedactTokens())

M = TypeVar("M", bound=BaseModel)


async def send(
    ctx: ConnectorContext,
    operation: str,
    method: str,
    path: str,
    *,
    headers: Mapping[str, str],
    json: Any = None,
    params: Mapping[str, str] | None = None,
    content: bytes | None = None,
) -> httpx.Response:
    """Call ``ctx.base_url + path``; 2xx/3xx/4xx are returned, everything else raises.
    ``content``: a body already encoded (a form), instead of ``json``."""
    async with timing.provider():  # Server-Timing's provider share (observability/timing.py)
        if not tracing.enabled:
            return await _send(ctx, operation, method, path, headers, json, params, content)
        # A span per call, beside its metrics; _done notes the outcome on it.
        with tracing.provider_call(ctx.provider, operation, ctx.mode.value, ctx.connector_id):
            return await _send(ctx, operation, method, path, headers, json, params, content)


async def _send(
    ctx: ConnectorContext,
    operation: str,
    method: str,
    path: str,
    headers: Mapping[str, str],
    json: Any,
    params: Mapping[str, str] | None,
    content: bytes | None,
) -> httpx.Response:
    started = time.monotonic()
    try:
        async with asyncio.timeout(ctx.timeout_seconds):
            response = await ctx.http.request(
                method,
                ctx.base_url + path,
                headers=dict(headers),
                json=json,
                params=params,
                content=content,
            )
            await response.aread()
    except TimeoutError:
        _done(ctx, operation, "timeout", started, "timeout")
        raise ProviderUnavailable(
            f"{operation}: no answer within {ctx.timeout_seconds:g}s", provider=ctx.provider
        ) from None
    except httpx.HTTPError as exc:
        _done(ctx, operation, type(exc).__name__, started, "network")
        raise ProviderUnavailable(
            f"{operation}: network error ({type(exc).__name__})", provider=ctx.provider
        ) from None
    except OSError as exc:
        _done(ctx, operation, type(exc).__name__, started, "network")
        raise ProviderUnavailable(
            f"{operation}: network error ({type(exc).__name__})", provider=ctx.provider
        ) from None
    except Exception:
        # In-process (MOCK) calls re-raise the simulator's own crash here; from the adapter's
        # side that is a provider failing, not a bug of the caller.
        logger.exception(
            "provider call %s %s crashed in-process",
            ctx.provider,
            operation,
            extra={
                "provider": ctx.provider,
                "operation": operation,
                "outcome": "error",
                "latency_ms": round((time.monotonic() - started) * 1000, 1),
            },
        )
        _done(ctx, operation, "crashed", started, "error", log=False)
        raise ProviderUnavailable(f"{operation}: provider crashed", provider=ctx.provider) from None
    status = response.status_code
    if status == 503 and response.headers.get(OWN_DATABASE_HEADER) == "unavailable":
        # The in-process simulator could not reach our own database: our 503, not the provider's
        # (payorch.db.unavailable): not counted as a provider call nor against its health.
        logger.warning("provider call %s %s: our own database unavailable", ctx.provider, operation)
        raise DatabaseUnavailable(RETRY_AFTER_SECONDS)
    kind = "http_5xx" if status >= 500 else "http_4xx" if status >= 400 else None
    _done(ctx, operation, str(status), started, kind)
    if status >= 500:
        raise ProviderUnavailable(
            f"{operation}: provider answered {response.status_code}",
            provider=ctx.provider,
            code=str(response.status_code),
        )
    return response


def parse(model: type[M], response: httpx.Response, operation: str, provider: str) -> M:
    """The body as ``model``; an unparseable answer is ProviderUnavailable (it tells nothing)."""
    try:
        return model.model_validate_json(response.content)
    except ValidationError:
        record_provider_error(provider, operation, "invalid_response")
        logger.warning(
            "provider call %s %s: unparseable answer (HTTP %s)",
            provider,
            operation,
            response.status_code,
            extra={"provider": provider, "operation": operation, "outcome": "invalid_response"},
        )
        raise ProviderUnavailable(
            f"{operation}: unparseable answer (HTTP {response.status_code})", provider=provider
        ) from None


def json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _done(
    ctx: ConnectorContext,
    operation: str,
    result: str,
    started: float,
    error_kind: str | None,
    *,
    log: bool = True,
) -> None:
    seconds = time.monotonic() - started
    observe_provider_call(ctx.provider, operation, seconds, error_kind)
    failed = error_kind in _FAILURES  # no answer, 5xx, crash; a 4xx is an answer the adapter judges
    if tracing.enabled:
        status = int(result) if result.isdigit() else None
        tracing.provider_outcome(error_kind or "ok", status, failed)
    if log:
        logger.log(
            logging.WARNING if failed else logging.INFO,
            "provider call %s %s -> %s in %.0f ms (connector %s, %s)",
            ctx.provider,
            operation,
            result,
            seconds * 1000,
            ctx.connector_id,
            ctx.mode.value,
            extra={
                "provider": ctx.provider,
                "operation": operation,
                "outcome": error_kind or "ok",
                "result": result,
                "latency_ms": round(seconds * 1000, 1),
                "connector_id": ctx.connector_id,
            },
        )
