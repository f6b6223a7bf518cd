"""The provider's word: a notification a provider signs is, for some providers, its own statement
of what happened, as good as an API answer (docs/providers.md, "A provider whose notification is
its word"). Adyen, for one, has no call that reads a payment or a modification back: its signed
notifications are the only place its outcome is said.

The adapter keeps such words through ``ctx.words`` (a port: the framework's store fills it in
``providers/contexts.py``, scoped to the connector the notification came to) and reads them back
where another provider would read its API. The adapter stays free of the database.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class ProviderWord:
    """One verified notification item, in the provider's own names."""

    event: str  # its event code (Adyen: AUTHORISATION, CAPTURE, REFUND...)
    reference: str  # the provider's reference of what it speaks of (a payment, a modification)
    success: bool
    original_reference: str | None = None  # a modification's payment
    merchant_reference: str | None = None  # what payorch named it when it asked
    amount: int | None = None  # minor units
    currency: str | None = None
    reason: str | None = None  # the provider's words on a failure (may be empty)
    event_at: datetime | None = None  # the provider's time of the event


@dataclass(frozen=True)
class WordQuery:
    """Which kept words to find: of ``events``, matching every reference given."""

    events: frozenset[str]
    reference: str | None = None
    original_reference: str | None = None
    merchant_reference: str | None = None


class ProviderWords(Protocol):
    """The words of one connector's provider (the context's connector)."""

    async def record(self, word: ProviderWord) -> bool:
        """Keep ``word``; False when it was kept before (the provider sends again: one word is
        keyed by its event, reference and success)."""
        ...

    async def find(self, query: WordQuery) -> list[ProviderWord]:
        """The kept words ``query`` names, oldest first."""
        ...


class NoWords:
    """A context built without a store (an adapter's unit test): it finds nothing and refuses
    to keep anything, so a verified word is never dropped silently."""

    async def record(self, word: ProviderWord) -> bool:
        raise RuntimeError("this connector context keeps no provider words")

    async def find(self, query: WordQuery) -> list[ProviderWord]:
        return []


NO_WORDS = NoWords()


def said_at(text: str | None) -> datetime | None:
    """A word's ``event_at`` from the provider's ISO 8601 time: None for a time without its offset
    (its zone unknown, so no moment) or for none at all."""
    try:
        at = datetime.fromisoformat(text or "")
    except ValueError:
        return None
    return at if at.tzinfo is not None else None


async def latest(words: ProviderWords, event: str, reference: str) -> ProviderWord | None:
    """The newest kept word of ``event`` on ``reference`` (None: the provider has not said it)."""
    said = await words.find(WordQuery(frozenset({event}), reference=reference))
    return said[-1] if said else None


async def keep(words: ProviderWords, said: Iterable[ProviderWord]) -> list[ProviderWord]:
    """The verified words of one notification, each kept (an item a body repeats counts once):
    what payorch acts on, in the body's order."""
    unique = list({(w.event, w.reference, w.success): w for w in said}.values())
    for word in unique:
        await words.record(word)
    return unique


def standing(words: Iterable[ProviderWord]) -> ProviderWord | None:
    """The successful word that says where a thing stands: the first with the provider's time,
    else the first (None: nothing succeeded yet)."""
    succeeded = [w for w in words if w.success]
    return next((w for w in succeeded if w.event_at is not None), succeeded[0] if succeeded else None)
