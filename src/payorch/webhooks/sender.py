"""One delivery attempt: vet the URL, connect to the vetted address, POST the signed bytes.

The connection goes to the address ``urls.vet`` approved, never to a fresh lookup: the client
(``http1.Client``) takes an address to connect to, while Host, TLS SNI and the certificate check
use the URL's host name. Each environment has its own connection pool, so a SANDBOX connection
to a private address can never be reused by a PRODUCTION delivery to the same name. Redirects
are never followed (a 3xx is a failure like any other non-2xx).

No excerpt of the answer is kept when the target is not public (a loopback or private address,
reachable only by SANDBOX applications while PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE is on): the
delivery history must not become a way to read internal services.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from payorch.webhooks import failures, urls
from payorch.webhooks.failures import Failure
from payorch.webhooks.http1 import Client, HttpError
from payorch.webhooks.signing import signatures, standard_signatures

EXCERPT_CHARS = 1024
MAX_READ_BYTES = 8192  # read no more of a consumer's answer than an excerpt needs

# Error kinds recorded on a failed attempt.
TIMEOUT = "timeout"
NETWORK_ERROR = "network_error"
URL_NOT_ALLOWED = "url_not_allowed"
UNEXPECTED_STATUS = "unexpected_status"

_SAFE_PATH = "/%:@!$&'()*+,;=-._~"


@dataclass(frozen=True)
class AttemptOutcome:
    succeeded: bool
    duration_ms: int
    response_status: int | None
    response_excerpt: str | None
    error: str | None
    # What happened, in words (webhooks/failures.py); None on success.
    failure_reason: str | None = None
    failure_message: str | None = None


class Sender:
    """Owns the outgoing connections of a worker process (one pool per application environment)."""

    def __init__(
        self,
        *,
        timeout_seconds: float,
        sandbox_private: bool,
        resolver: urls.Resolver | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.timeout_seconds = timeout_seconds
        self.sandbox_private = sandbox_private  # PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE
        self.resolver = resolver
        self._clients = {
            env: Client(ssl_context=ssl_context, max_body=MAX_READ_BYTES)
            for env in (urls.SANDBOX, urls.PRODUCTION)
        }

    async def attempt(
        self,
        *,
        url: str,
        environment: str,
        secret: str | tuple[str, ...],
        event_id: str,
        body: bytes,
        timestamp: int,
        traceparent: str | None = None,
    ) -> AttemptOutcome:
        """``secret``: the endpoint's secret, or its secrets during a rotation's overlap (the new
        one first): each signs, so a receiver holding either verifies (docs/webhooks.md).
        ``traceparent``: the attempt's span (tracing on), sent for the receiver to continue."""
        keys = (secret,) if isinstance(secret, str) else secret
        start = time.monotonic()
        client = self._clients[urls.SANDBOX if environment == urls.SANDBOX else urls.PRODUCTION]
        try:
            # One deadline for the whole attempt: lookup, connect, send and answer.
            async with asyncio.timeout(self.timeout_seconds):
                target = await urls.vet(url, environment, self.resolver, sandbox_private=self.sandbox_private)
                answer = await client.post(
                    scheme=target.scheme,
                    addresses=target.addresses,
                    port=target.port,
                    host=_ascii_host(target.host),
                    target=_request_target(url),
                    headers={
                        "Content-Type": "application/json",
                        "User-Agent": "payorch-webhooks/1",
                        "X-Pay-Event-Id": event_id,
                        "X-Pay-Timestamp": str(timestamp),
                        "X-Pay-Signature": signatures(keys, timestamp, body),
                        "webhook-id": event_id,
                        "webhook-timestamp": str(timestamp),
                        "webhook-signature": standard_signatures(keys, event_id, timestamp, body),
                        **({"traceparent": traceparent} if traceparent else {}),
                    },
                    body=body,
                )
        except urls.UrlNotAllowed as exc:
            return _failure(start, URL_NOT_ALLOWED, failures.refused_url(exc))
        except TimeoutError:
            return _failure(start, TIMEOUT, failures.timed_out(self.timeout_seconds))
        except (HttpError, OSError) as exc:
            return _failure(start, NETWORK_ERROR, failures.network(exc))
        excerpt = None
        if target.public:
            excerpt = answer.body.decode("utf-8", errors="replace")[:EXCERPT_CHARS]
        if 200 <= answer.status < 300:
            return AttemptOutcome(True, _ms(start), answer.status, excerpt, None)
        failure = failures.status(answer.status)
        return AttemptOutcome(
            False, _ms(start), answer.status, excerpt, UNEXPECTED_STATUS, failure.reason, failure.message
        )

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()


def _request_target(url: str) -> str:
    parts = urlsplit(url)
    path = quote(parts.path or "/", safe=_SAFE_PATH)
    return path + ("?" + quote(parts.query, safe=_SAFE_PATH + "?") if parts.query else "")


def _ascii_host(host: str) -> str:
    return host if host.isascii() else host.encode("idna").decode("ascii")


def _ms(start: float) -> int:
    return int((time.monotonic() - start) * 1000)


def _failure(start: float, error: str, failure: Failure) -> AttemptOutcome:
    return AttemptOutcome(False, _ms(start), None, None, error, failure.reason, failure.message)
