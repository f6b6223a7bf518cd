"""HTTPS deliveries connect to the vetted address yet check the certificate against the URL's
host name (SNI and hostname verification use the name, not the address)."""

from __future__ import annotations

import ssl
from pathlib import Path

from payorch.webhooks.sender import Sender
from tests.webhooks.helpers import independent_signature_ok, self_signed
from tests.webhooks.receiver import serve_receiver

SECRET = "ab" * 32


async def test_https_to_a_pinned_address_verifies_the_host_name(tmp_path: Path) -> None:
    certfile, keyfile, pem = self_signed("hooks.test", tmp_path)
    trust = ssl.create_default_context(cadata=pem.decode())
    async with serve_receiver(4400, certfile, keyfile) as receiver:

        async def resolver(host: str, port: int) -> list[str]:
            return [receiver.host]

        sender = Sender(timeout_seconds=3, sandbox_private=True, resolver=resolver, ssl_context=trust)
        try:
            ok = await sender.attempt(
                url="https://hooks.test:4400/tls",
                environment="SANDBOX",
                secret=SECRET,
                event_id="evt_tls",
                body=b'{"id":"evt_tls"}',
                timestamp=1795000000,
            )
            assert ok.succeeded, ok
            [request] = receiver.requests
            assert request.headers["host"] == "hooks.test:4400"
            assert independent_signature_ok(SECRET, request.headers, request.body)

            # The same address under another name: the certificate does not match, nothing sent.
            wrong = await sender.attempt(
                url="https://other.test:4400/tls",
                environment="SANDBOX",
                secret=SECRET,
                event_id="evt_tls2",
                body=b"{}",
                timestamp=1795000000,
            )
            assert not wrong.succeeded and wrong.error == "network_error"
            assert len(receiver.requests) == 1
        finally:
            await sender.aclose()

    # And without trusting that certificate, nothing is sent either (verification is on).
    async with serve_receiver(4400, certfile, keyfile) as receiver:

        async def resolver2(host: str, port: int) -> list[str]:
            return [receiver.host]

        strict = Sender(timeout_seconds=3, sandbox_private=True, resolver=resolver2)
        try:
            refused = await strict.attempt(
                url="https://hooks.test:4400/tls",
                environment="SANDBOX",
                secret=SECRET,
                event_id="evt_tls3",
                body=b"{}",
                timestamp=1795000000,
            )
            assert refused.error == "network_error" and receiver.requests == []
        finally:
            await strict.aclose()
