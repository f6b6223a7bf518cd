"""providers/words.py through the context the framework builds (providers/contexts.py): a
connector's words are kept once under the provider's own key (reference, event, success),
found by any of their references, and never seen from another connector. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

from payorch.providers.base import ConnectorContext
from payorch.providers.registry import PROVIDER_IDS
from payorch.providers.words import NO_WORDS, ProviderWord, WordQuery, keep, said_at, standing
from payorch.runtime import Runtime

AUTHORISED = ProviderWord(
    "AUTHORISATION", "PSP0000000000001", True, merchant_reference="pi_1.chk_1", amount=1000, currency="EUR",
    event_at=datetime(2026, 12, 5, 8, 0, tzinfo=UTC),
)
CAPTURED = ProviderWord("CAPTURE", "PSP0000000000002", True, original_reference="PSP0000000000001", amount=600)
CAPTURE_FAILED = ProviderWord(
    "CAPTURE", "PSP0000000000002", False, original_reference="PSP0000000000001", reason="Insufficient balance"
)


def _ctx(runtime: Runtime, connector_id: str) -> ConnectorContext:
    return runtime.connector_contexts.build(
        connector_id=connector_id, application_id="app_1", provider=PROVIDER_IDS[0], mode="SANDBOX", credentials={}
    )


async def test_a_word_is_kept_once_and_found_by_its_references(runtime: Runtime) -> None:
    words = _ctx(runtime, "con_words_1").words
    assert await words.record(AUTHORISED) is True
    assert await words.record(AUTHORISED) is False  # the provider sent it again: nothing new
    assert await words.record(CAPTURED) is True
    assert await words.record(CAPTURE_FAILED) is True  # another success: another word

    assert await words.find(WordQuery(frozenset({"AUTHORISATION"}), merchant_reference="pi_1.chk_1")) == [AUTHORISED]
    assert await words.find(WordQuery(frozenset({"AUTHORISATION"}), reference="PSP0000000000001")) == [AUTHORISED]
    captures = await words.find(WordQuery(frozenset({"CAPTURE", "CANCELLATION"}), original_reference="PSP0000000000001"))
    assert captures == [CAPTURED, CAPTURE_FAILED]
    assert await words.find(WordQuery(frozenset({"REFUND"}), original_reference="PSP0000000000001")) == []
    assert await words.find(WordQuery(frozenset({"AUTHORISATION"}), merchant_reference="pi_2.chk_2")) == []


async def test_another_connector_sees_none_of_them(runtime: Runtime) -> None:
    assert await _ctx(runtime, "con_words_2").words.record(AUTHORISED) is True
    assert await _ctx(runtime, "con_words_3").words.find(WordQuery(frozenset({"AUTHORISATION"}))) == []
    assert await _ctx(runtime, "con_words_3").words.record(AUTHORISED) is True  # its own, anew


async def test_a_context_without_a_store_never_drops_a_word() -> None:
    assert await NO_WORDS.find(WordQuery(frozenset({"AUTHORISATION"}))) == []
    try:
        await NO_WORDS.record(AUTHORISED)
    except RuntimeError:
        return
    raise AssertionError("a word recorded nowhere must fail loudly")


async def test_keep_records_a_notifications_words_once_each_in_order(runtime: Runtime) -> None:
    words = _ctx(runtime, "con_words_4").words
    kept = await keep(words, [AUTHORISED, CAPTURED, AUTHORISED, CAPTURE_FAILED])  # one item sent twice
    assert kept == [AUTHORISED, CAPTURED, CAPTURE_FAILED]
    assert await words.find(WordQuery(frozenset({"AUTHORISATION"}))) == [AUTHORISED]
    assert await keep(words, [AUTHORISED]) == [AUTHORISED]  # kept before: still acted on


def test_standing_is_the_first_success_with_a_time_else_the_first_success() -> None:
    untimed = ProviderWord("CANCELLATION", "PSP0000000000003", True, original_reference="PSP0000000000001")
    assert standing([CAPTURE_FAILED, untimed, AUTHORISED]) == AUTHORISED
    assert standing([CAPTURE_FAILED, untimed, CAPTURED]) == untimed
    assert standing([CAPTURE_FAILED]) is None
    assert standing([]) is None


def test_a_words_time_needs_its_offset() -> None:
    assert said_at("2026-12-05T08:00:00+01:00") == datetime(2026, 12, 5, 7, 0, tzinfo=UTC)
    assert said_at("2026-12-05T08:00:00") is None  # no offset: no moment
    assert said_at("not a time") is None
    assert said_at(None) is None
