"""Structured JSON logs, one object a line, each carrying the request id when there is one.

Every line passes through ``redact`` (in the formatter, and as a filter for any other handler
on ours): API keys (``pay_sb_…``/``pay_live_…``), bearer tokens and values of secret-named
fields are masked. That is a safety net: code must still never log secrets on purpose.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import IO, Any

from payorch.http.context import request_id_var

MASK = "[REDACTED]"
_API_KEY = re.compile(r"\bpay_(sb|live)_([0-9A-Za-z]{1,32})_[0-9A-Za-z]+")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{8,}")
# "api_key": "...", access_token=..., 'webhook_secret': '...', secret: ...
_SECRET_FIELD = re.compile(
    r"(?i)([\"']?\b(?:api_key|access_token|webhook_secret|secret|secret_key|password|"
    r"authorization)[\"']?\s*[:=]\s*)(?:\"[^\"]*\"|'[^']*'|[^\s,;}\]&]+)"
)
_HEX64 = re.compile(r"\b[0-9a-fA-F]{64}\b")  # the shape of a webhook endpoint secret

# Attributes every LogRecord has; anything else came from `extra=` and is logged as a field.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's copy of the message with terminal colour codes
}


def redact(text: str) -> str:
    if not text:
        return text
    text = _API_KEY.sub(lambda m: f"pay_{m.group(1)}_{m.group(2)}_{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _SECRET_FIELD.sub(lambda m: f"{m.group(1)}{MASK}", text)
    return _HEX64.sub(MASK, text)


class RedactingFilter(logging.Filter):
    """Masks secrets in a record's message, for handlers that do not use JsonFormatter."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
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
        # Redact the whole line: message, extra fields and traceback alike.
        return redact(json.dumps(entry, default=str))


def build_handler(stream: IO[str] | None = None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactingFilter())
    return handler


def configure_logging(level: int = logging.INFO) -> None:
    root = logging.getLogger()
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    root.handlers = [build_handler()]
    root.setLevel(level)
    # One line per outgoing request at INFO is noise at 1000 req/s; warnings still show.
    logging.getLogger("httpx").setLevel(logging.WARNING)
