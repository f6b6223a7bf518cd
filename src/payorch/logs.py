"""Structured JSON logs, one object a line, each carrying the request id when there is one.

Every line passes through ``redact``: API keys (``pay_sb_…``/``pay_live_…``), bearer tokens and
values of secret-named fields are masked. That is a safety net: code must still never log
secrets on purpose.

One pass a line: the line is encoded (orjson), and one cheap look at it (``may_hold_secret``)
tells whether any pattern could match. Most lines (a request's line) have nothing to mask and are
written as encoded. A line that might gets the full redaction: each text as it was logged (the
message, the traceback, every text field), then the encoded line (field names, nested values).
"""

from __future__ import annotations

import json
import logging
import re
import string
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

import orjson

from payorch.http.context import request_id_var

MASK = "[REDACTED]"
_API_KEY = re.compile(r"\bpay_(sb|live)_([0-9A-Za-z]{1,32})_[0-9A-Za-z]+")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{8,}")
_SECRET_NAMES = ("api_key", "access_token", "webhook_secret", "secret", "secret_key", "password")
# "api_key": "...", access_token=..., 'webhook_secret': '...', secret: ...
_SECRET_FIELD = re.compile(
    r"(?i)([\"']?\b(?:" + "|".join((*_SECRET_NAMES, "authorization")) + r")[\"']?\s*[:=]\s*)"
    r"(?:\"[^\"]*\"|'[^']*'|[^\s,;}\]&]+)"
)
_HEX64 = re.compile(r"\b[0-9a-fA-F]{64}\b")  # the shape of a webhook endpoint secret
# What every match of a pattern above contains: in lower case "pay_", "bearer" or a secret name
# ("authorization" included), or 64 hex digits in a row. No match without one of them.
_WORDS = re.compile("|".join(("pay_", "bearer", "authorization", *_SECRET_NAMES)).encode())
_HEX_DIGITS = bytes(chr(byte) in string.hexdigits for byte in range(256))  # 1 for a hex digit
_HEX_RUN = b"\x01" * 64

# Attributes every LogRecord has; anything else came from `extra=` and is logged as a field.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's copy of the message with terminal colour codes
}


def may_hold_secret(line: bytes) -> bool:
    """False only if no pattern of ``redact`` can match the text ``line`` encodes (UTF-8).

    Cheaper than four substitutions that find nothing, and than one regex with the hex run as a
    branch (docs/performance-decisions.md, "The request log line"). ``bytes.lower`` folds case as the
    patterns' ``(?i)`` does for ASCII only (``re`` also folds "ſ" to "s" and the Kelvin sign to
    "k"): any other text may hold a secret."""
    if not line.isascii():
        return True
    return _WORDS.search(line.lower()) is not None or _HEX_RUN in line.translate(_HEX_DIGITS)


def redact(text: str) -> str:
    if not text:
        return text
    text = _API_KEY.sub(lambda m: f"pay_{m.group(1)}_{m.group(2)}_{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _SECRET_FIELD.sub(lambda m: f"{m.group(1)}{MASK}", text)
    return _HEX64.sub(MASK, text)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": iso_millis(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id_var.get(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        try:
            line = _orjson(entry)
        except TypeError:  # an int beyond 64 bits, a lone surrogate: the standard library copes
            return _redacted_line(entry, _stdlib_line)
        return _redacted_line(entry, _orjson_line) if may_hold_secret(line) else line.decode()


_SECOND: list[tuple[int, str]] = [(-1, "")]  # the last whole second formatted, and its text


def iso_millis(created: float) -> str:
    """``created`` in ISO 8601 to the millisecond, UTC, as ``datetime.isoformat`` writes it. The
    date and time of day are formatted once a second: the lines of a busy second share them."""
    second = int(created)
    micro = round((created - second) * 1_000_000)  # as datetime.fromtimestamp rounds
    if micro == 1_000_000:
        second, micro = second + 1, 0
    last, text = _SECOND[0]
    if second != last:
        text = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _SECOND[0] = (second, text)
    return f"{text}.{micro // 1000:03d}+00:00"


def _orjson(entry: dict[str, Any]) -> bytes:
    # default=str: an extra that JSON cannot hold is logged as its text; non-str keys as in json.
    return orjson.dumps(entry, default=str, option=orjson.OPT_NON_STR_KEYS)


def _orjson_line(entry: dict[str, Any]) -> str:
    return _orjson(entry).decode()


def _stdlib_line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, default=str)


def _redacted_line(entry: dict[str, Any], encode: Callable[[dict[str, Any]], str]) -> str:
    # Each text first, as it was logged: escaping it for JSON can hide a secret from the patterns
    # (a key after a newline reads "\npay_sb_…", a quoted value with a space loses its quotes).
    # Then the whole line: secret-named fields, nested values, objects logged through str().
    texts = {key: redact(value) for key, value in entry.items() if _text_may_hold_secret(value)}
    return redact(encode(entry | texts))


def _text_may_hold_secret(value: object) -> bool:
    if not isinstance(value, str):
        return False
    return not value.isascii() or may_hold_secret(value.encode())


def build_handler(stream: IO[str] | None = None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    return handler


def configure_logging(level: int = logging.INFO) -> None:
    root = logging.getLogger()
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    root.handlers = [build_handler()]
    root.setLevel(level)
    # One line per outgoing request at INFO is noise at 1000 req/s; warnings still show.
    logging.getLogger("httpx").setLevel(logging.WARNING)
