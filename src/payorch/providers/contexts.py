"""Builds the ``ConnectorContext`` of one connector: where its provider's API is, and with which
credentials to call it.

The adapter contract (base.py) knows nothing of the simulator; this is where MOCK mode is
resolved: the base URL is the simulator's under PAYORCH_PUBLIC_URL, and the credentials are the
simulator's per-application MOCK credentials (each provider's registration derives them),
never stored ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx

from payorch.clock import Clock
from payorch.crypto import Cipher
from payorch.providers.base import ConnectorContext, Credentials, Mode
from payorch.providers.registry import registration_of
from payorch.providers.words import ProviderWords

# (connector id, provider) -> that connector's store of its provider's words (providers/words.py).
WordsOf = Callable[[str, str], ProviderWords]


class ConnectorContexts:
    """One per process (on the Runtime): holds what every context shares."""

    def __init__(
        self,
        *,
        cipher: Cipher,
        http: httpx.AsyncClient,
        clock: Clock,
        public_url: str,
        timeout_seconds: float,
        words: WordsOf,
    ) -> None:
        self._cipher = cipher
        self._http = http
        self._clock = clock
        self._public_url = public_url
        self._timeout_seconds = timeout_seconds
        self._words = words

    def build(
        self,
        *,
        connector_id: str,
        application_id: str,
        provider: str,
        mode: Mode | str,
        credentials: Mapping[str, str] | None,
    ) -> ConnectorContext:
        """A context for one connector. MOCK mode ignores ``credentials``."""
        mode = Mode(mode)
        registration = registration_of(provider)
        adapter = registration.adapter
        if mode is Mode.MOCK:
            credentials = registration.mock_credentials(self._cipher, application_id)
        return ConnectorContext(
            connector_id=connector_id,
            application_id=application_id,
            provider=provider,
            mode=mode,
            base_url=adapter.base_url(mode, self._public_url),
            credentials=Credentials(credentials or {}),
            http=self._http,
            clock=self._clock,
            timeout_seconds=self._timeout_seconds,
            words=self._words(connector_id, provider),
        )
