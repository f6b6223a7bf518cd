"""A failed attempt says what happened (webhooks/failures.py): each kind of failure made for
real against the sender (a name that does not resolve, refused, reset, timeout after N s, TLS, HTTP status, a redirect, a
refused URL), and one through HTTP to show the reason and message on the delivery and its
attempt (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from payorch.webhooks.sender import AttemptOutcome, Sender
from tests.webhooks.helpers import BASE, Hooks, create_endpoint, create_intent, deliveries_of, self_signed
from tests.webhooks.receiver import loopback_socket, serve_receiver

SECRET = "cd" * 32


async def _attempt(url: str, *, timeout: float = 3, environment: str = "SANDBOX") -> AttemptOutcome:
    async def resolver(host: str, port: int) -> list[str]:
        raise OSError("no such name")

    sender = Sender(timeout_seconds=timeout, sandbox_private=True, resolver=resolver)
    try:
        return await sender.attempt(
            url=url, environment=environment, secret=SECRET, event_id="evt_x", body=b"{}", timestamp=1
        )
    finally:
        await sender.aclose()


@contextlib.asynccontextmanager
async def _closing_server() -> AsyncIterator[str]:
    """Accepts a connection and closes it at once: no answer."""

    async def close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(close, sock=loopback_socket())
    host = server.sockets[0].getsockname()[0]
    async with server:
        yield host


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_each_failure_kind_has_its_reason_and_message(tmp_path: Path) -> None:
    dns = await _attempt("http://hooks.invalid:8080/x")
    assert (dns.error, dns.failure_reason) == ("url_not_allowed", "url_not_allowed")
    assert dns.failure_message == (
        "the URL is not allowed: the URL's host is not allowed or does not resolve to an allowed address"
    )

    sock = loopback_socket()
    host = sock.getsockname()[0]
    sock.close()  # the address is free again: nothing listens there
    refused = await _attempt(f"http://{host}:8080/x")
    assert (refused.error, refused.failure_reason) == ("network_error", "connection_refused")

    async with _closing_server() as closing:
        reset = await _attempt(f"http://{closing}:8080/x")
    assert reset.failure_reason == "connection_reset", reset

    async with serve_receiver() as receiver:
        slow = await _attempt(receiver.url("/sleep/2"), timeout=0.3)
        assert (slow.error, slow.failure_reason) == ("timeout", "timeout")
        assert slow.failure_message == "no complete answer within 0.3 s"
        status = await _attempt(receiver.url("/status/503"))
        assert (status.error, status.failure_reason) == ("unexpected_status", "http_status")
        assert status.failure_message == "HTTP 503: not a 2xx answer"
        redirect = await _attempt(receiver.url("/redirect"))
        assert redirect.failure_message == "HTTP 302: a redirect (redirects are not followed)"
        ok = await _attempt(receiver.url("/ok"))
        assert ok.succeeded and ok.failure_reason is None and ok.failure_message is None

    refused_url = await _attempt("http://shop.example/x", environment="PRODUCTION")
    assert refused_url.failure_reason == "url_not_allowed"
    assert refused_url.failure_message == "the URL is not allowed: a PRODUCTION application needs https"

    certfile, keyfile, _ = self_signed("hooks.test", tmp_path)
    async with serve_receiver(4400, certfile, keyfile) as tls_receiver:
        tls = await _attempt(f"https://{tls_receiver.host}:4400/x")  # untrusted, and the wrong name
    assert (tls.error, tls.failure_reason) == ("network_error", "tls_error")
    assert "certificate" in (tls.failure_message or "")


async def test_the_reason_and_message_show_on_the_delivery_and_its_attempts(hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    sock = loopback_socket()
    host = sock.getsockname()[0]
    sock.close()
    endpoint_id, _ = await create_endpoint(client, sandbox, f"http://{host}:8080/nobody")
    await create_intent(client, sandbox, "refused")
    await deliveries.run_until_idle(runtime)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["error"] == "network_error"
    assert delivery["failure_reason"] == "connection_refused"
    assert "refused" in delivery["failure_message"]
    read = await client.get(f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}", headers=sandbox.headers)
    [attempt] = read.json()["attempt_history"]
    assert attempt["failure_reason"] == "connection_refused"
    assert attempt["failure_message"] == delivery["failure_message"]
