"""The framework's side of ``ctx.words`` (providers/words.py): one connector's words, each call
in a phase of its own (an adapter is called with nothing open)."""

from __future__ import annotations

from payorch.clock import Clock
from payorch.db import Phases
from payorch.provider_words import repository
from payorch.providers.words import ProviderWord, WordQuery


class StoredWords:
    def __init__(self, phases: Phases, clock: Clock, connector_id: str, provider: str) -> None:
        self._phases = phases
        self._clock = clock
        self._connector_id = connector_id
        self._provider = provider

    async def record(self, word: ProviderWord) -> bool:
        async with self._phases.transaction() as conn:
            now = self._clock.now()
            return await repository.insert_if_absent(conn, self._connector_id, self._provider, word, now)

    async def find(self, query: WordQuery) -> list[ProviderWord]:
        # The primary: a word kept a moment ago must be found (a replica may lag behind it).
        async with self._phases.transaction() as conn:
            return await repository.find(conn, self._connector_id, query)


class WordStores:
    """Makes each connector's store: handed to ``ConnectorContexts`` by the composition root."""

    def __init__(self, phases: Phases, clock: Clock) -> None:
        self._phases = phases
        self._clock = clock

    def of(self, connector_id: str, provider: str) -> StoredWords:
        return StoredWords(self._phases, self._clock, connector_id, provider)
