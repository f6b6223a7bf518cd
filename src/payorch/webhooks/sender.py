"""One delivery attempt: vet the URL, connect to the vetted address, POST the signed bytes.

The connection goes to the address ``urls.vet`` approved, never to a fresh lookup: a network
backend that refuses to resolve names connects to the pinned address while the URL keeps the
host name (so Host and TLS SNI and certificate checks use the name). Each environment has its
own connection pool, so a SANDBOX connection to a private address can never be reused by a
PRODUCTION delivery to the same name. Redirects are never followed (a 3xx is a failure).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
import typing
from dataclasses import dataclass

import httpcore
import httpx

from payorch.webhooks import urls
from payorch.webhooks.signing import signature

EXCERPT_CHARS = 1024
MAX_READ_BYTES = 8192  # read no more of a consumer's answer than an excerpt needs

# Error kinds recorded on a failed attempt.
TIMEOUT = "timeout"
NETWORK_ERROR = "network_error"
URL_NOT_ALLOWED = "url_not_allowed"
UNEXPECTED_STATUS = "unexpected_status"

_pinned: contextvars.ContextVar[tuple[str, int, str] | None] = contextvars.ContextVar(
    "payorch_webhook_pinned", default=None
)


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to the address pinned for the current attempt; never resolves a name."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        pinned = _pinned.get()
        if pinned is None or (pinned[0].lower(), pinned[1]) != (host.lower(), port):
            raise httpcore.ConnectError("no vetted address for this host")
        return await self._inner.connect_tcp(
            pinned[2], port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(self, *args: typing.Any, **kwargs: typing.Any) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used for webhooks")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _PinnedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, max_connections: int) -> None:
        super().__init__(retries=0, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=30.0,
            network_backend=_PinnedBackend(),
        )


@dataclass(frozen=True)
class Outcome:
    succeeded: bool
    started_at_monotonic: float
    duration_ms: int
    response_status: int | None
    response_excerpt: str | None
    error: str | None


class Sender:
    """Owns the outgoing pools of a worker process (one per application environment)."""

    def __init__(self, *, timeout_seconds: float, max_connections: int = 256,
                 resolver: urls.Resolver | None = None) -> None:
        self.timeout_seconds = timeout_seconds
        self.resolver = resolver
        self._clients = {
            env: httpx.AsyncClient(
                transport=_PinnedTransport(max_connections),
                follow_redirects=False,
                timeout=httpx.Timeout(timeout_seconds),
                trust_env=False,
            )
            for env in (urls.SANDBOX, urls.PRODUCTION)
        }

    async def attempt(
        self, *, url: str, environment: str, secret: str, event_id: str, body: bytes, timestamp: int
    ) -> Outcome:
        start = time.monotonic()
        try:
            target = await urls.vet(url, environment, self.resolver)
        except urls.UrlNotAllowed:
            return _failure(start, None, None, URL_NOT_ALLOWED)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "payorch-webhooks/1",
            "X-Pay-Event-Id": event_id,
            "X-Pay-Timestamp": str(timestamp),
            "X-Pay-Signature": signature(secret, timestamp, body),
        }
        token = _pinned.set((target.host, target.port, target.address))
        client = self._clients[environment if environment in self._clients else urls.PRODUCTION]
        try:
            # One deadline for the whole exchange (httpx's own timeouts are per read).
            async with asyncio.timeout(self.timeout_seconds):
                async with client.stream("POST", url, content=body, headers=headers) as response:
                    raw = await _read_some(response)
        except TimeoutError:
            return _failure(start, None, None, TIMEOUT)
        except httpx.TimeoutException:
            return _failure(start, None, None, TIMEOUT)
        except (httpx.HTTPError, OSError):
            return _failure(start, None, None, NETWORK_ERROR)
        finally:
            _pinned.reset(token)
        excerpt = raw.decode("utf-8", errors="replace")[:EXCERPT_CHARS]
        ok = 200 <= response.status_code < 300
        return Outcome(
            ok, start, _ms(start), response.status_code, excerpt, None if ok else UNEXPECTED_STATUS
        )

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()


async def _read_some(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_READ_BYTES:
            break
    return b"".join(chunks)


def _ms(start: float) -> int:
    return int((time.monotonic() - start) * 1000)


def _failure(start: float, status: int | None, excerpt: str | None, error: str) -> Outcome:
    return Outcome(False, start, _ms(start), status, excerpt, error)
