"""A capture of everything logged during a test: the raw records (before redaction) and the
JSON lines our handler writes (the `logs` fixture)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from payorch.logs import build_handler


class Capture:
    """Everything logged at any level: the raw text (before redaction) and the JSON lines."""

    def __init__(self) -> None:
        self.raw: list[str] = []
        self.stream = io.StringIO()

    def lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines() if line]

    def everything(self) -> str:
        return "\n".join(self.raw) + "\n" + self.stream.getvalue()


class _Raw(logging.Handler):
    def __init__(self, capture: Capture) -> None:
        super().__init__(logging.DEBUG)
        self.capture = capture

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage() + " " + " ".join(f"{k}={v}" for k, v in vars(record).items())
        if record.exc_info and record.exc_info[1] is not None:
            text += " " + repr(record.exc_info[1])
        self.capture.raw.append(text)


@pytest.fixture
def logs() -> Iterator[Capture]:
    capture = Capture()
    root = logging.getLogger()
    # The raw handler keeps the records as logged; the JSON handler writes the masked lines.
    handlers = [_Raw(capture), build_handler(capture.stream)]
    old_level = root.level
    root.setLevel(logging.DEBUG)
    for handler in handlers:
        root.addHandler(handler)
    try:
        yield capture
    finally:
        for handler in handlers:
            root.removeHandler(handler)
        root.setLevel(old_level)


def lines_of(capture: Capture, logger: str) -> list[dict[str, object]]:
    return [line for line in capture.lines() if line["logger"] == logger]
