"""One log line, one redaction pass: a line with nothing to mask is written as orjson encoded it,
without the four substitutions; a line that may hold a secret is masked in every text as it was
logged and as a whole, so JSON escaping cannot hide a secret from the patterns. Extras that JSON
cannot hold are still logged."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterator

import pytest

from payorch import logs
from payorch.logs import MASK, build_handler, may_hold_secret, redact

KEY = "pay_sb_0123456789ab_" + "c" * 48
KEY_SECRET = "c" * 48
HEX = "ab" * 32


@pytest.fixture
def line_of() -> Iterator[Callable[..., dict[str, object]]]:
    """Log one record through our handler alone and read its line back."""
    stream = io.StringIO()
    logger = logging.getLogger("tests.log_line")
    handler = build_handler(stream)
    logger.addHandler(handler)
    logger.propagate, old = False, logger.propagate

    def log(
        message: str, *args: object, exc_info: bool = False, extra: dict[str, object] | None = None
    ) -> dict[str, object]:
        stream.seek(0)
        stream.truncate()
        logger.warning(message, *args, exc_info=exc_info, extra=extra)
        (line,) = stream.getvalue().splitlines()
        read: dict[str, object] = json.loads(line)
        read["_text"] = line
        return read

    try:
        yield log
    finally:
        logger.removeHandler(handler)
        logger.propagate = old


def test_a_line_with_nothing_to_mask_runs_no_substitution(
    line_of: Callable[..., dict[str, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def counted(text: str) -> str:
        calls.append(text)
        return redact(text)

    monkeypatch.setattr(logs, "redact", counted)
    line = line_of(
        "%s %s -> %s",
        "POST",
        "/v1/payment-intents",
        201,
        extra={"route": "/v1/payment-intents", "status": 201, "duration_ms": 1.5},
    )
    assert line["message"] == "POST /v1/payment-intents -> 201" and line["status"] == 201
    assert calls == []  # neither a filter on the message nor the formatter on the line
    line_of("key %s", KEY)
    assert calls, "a line with a key goes through redaction"


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        (f"headers:\n{KEY}", KEY_SECRET),  # JSON writes "\npay_sb_…": no word boundary there
        ("sent\tBearer abcdefghijklmnop", "abcdefghijklmnop"),  # "\tBearer" has no space after
        ('body {"password": "two words"}', "words"),  # JSON escapes the quotes around the value
        (f"endpoint\n{HEX}", HEX),
        (f"ſecret=hunter2hunter2 {KEY}", "hunter2hunter2"),  # re folds "ſ" to "s" under (?i)
    ],
)
@pytest.mark.parametrize("where", ["message", "traceback", "extra"])
def test_a_secret_that_json_escaping_would_hide_is_masked_wherever_it_is_logged(
    line_of: Callable[..., dict[str, object]], text: str, gone: str, where: str
) -> None:
    assert gone not in redact(text)  # as logged, the patterns find it
    if where == "message":
        line = line_of("%s", text)
    elif where == "traceback":
        try:
            raise RuntimeError(text)
        except RuntimeError:
            line = line_of("failed", exc_info=True)
        assert "RuntimeError" in str(line["traceback"])
    else:
        line = line_of("call", extra={"detail": text})
    assert gone not in str(line["_text"]) and MASK in str(line["_text"])


class Leaky:
    def __str__(self) -> str:
        return f"Leaky(token={KEY})"


def test_extras_json_cannot_hold_are_logged_as_text_and_still_masked(
    line_of: Callable[..., dict[str, object]],
) -> None:
    line = line_of("objects", extra={"thing": Leaky(), "counts": {1: "one"}, "huge": 2**70})
    assert str(line["thing"]).startswith("Leaky(token=pay_sb_0123456789ab_")
    assert KEY_SECRET not in str(line["_text"])
    assert line["counts"] == {"1": "one"} and line["huge"] == 2**70
    line = line_of("surrogate", extra={"odd": "\ud800"})  # orjson refuses it; json writes it
    assert line["odd"] == "\ud800"


REDACTED_TEXTS = [
    f"key {KEY}",
    "key pay_live_0123456789ab_" + "d" * 48,
    "Authorization: Bearer abcdefghijklmnop",
    "authorization: BEARER abcdefghijklmnop",
    '{"api_key": "sk_live_123456", "commerce_code": "597"}',
    "credentials={'access_token': 'APP-1234', 'webhook_secret': 'ws-99'}",
    "SECRET_KEY=abc PASSWORD: xyz Api_Key=1",
    "AUTHORIZATION=basic-credentials",
    f"endpoint secret {HEX}",
    f"endpoint {HEX.upper()}",
    "ſecret=hunter2",  # re's (?i) folds "ſ" to "s"...
    "api_\u212aey=abc",  # ...and the Kelvin sign to "k"
]


@pytest.mark.parametrize("text", REDACTED_TEXTS)
def test_the_pre_check_flags_every_text_redact_changes(text: str) -> None:
    assert redact(text) != text
    assert may_hold_secret(text.encode())
    assert may_hold_secret(json.dumps({"m": text}, ensure_ascii=False).encode())


def test_the_pre_check_knows_every_name_the_field_pattern_masks() -> None:
    field = logs._SECRET_FIELD.pattern
    names = re.search(r"\(\?:([a-z_|]+)\)", field)
    assert names is not None
    for name in names.group(1).split("|"):
        for spelled in (name, name.upper(), name.title()):
            text = f"{spelled}=value"
            assert redact(text) != text and may_hold_secret(text.encode()), spelled


def test_the_pre_check_passes_a_request_line() -> None:
    line = (
        '{"time":"2026-11-23T19:31:36.208+00:00","level":"INFO","logger":"payorch.requests",'
        '"message":"POST /v1/payment-intents -> 201","request_id":"req_01JD8ZK3QF6V2M4N5P7R9S0T1V",'
        '"method":"POST","route":"/v1/payment-intents","status":201,"duration_ms":12.3,'
        '"application_id":"app_01JD8ZK3QF6V2M4N5P7R9S0T1U"}'
    )
    assert redact(line) == line and not may_hold_secret(line.encode())
    assert may_hold_secret(line.replace("POST /v1", "POST é/v1").encode())  # not ASCII
    assert may_hold_secret(line.replace("req_01JD8ZK3QF6V2M4N5P7R9S0T1V", HEX).encode())
