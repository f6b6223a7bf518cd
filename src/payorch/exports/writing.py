"""Rows as CSV (Python's csv module) or JSON lines (orjson), one batch of bytes at a time.

The formula guard (OWASP, "CSV Injection"): a spreadsheet runs a cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return as a formula. In CSV every text cell starting
with one of those, or with ``'``, gets a ``'`` in front; to read the value back, drop one leading
``'`` from a text cell that starts with one (guarding ``'`` too keeps that exact). Integer cells
(amounts in minor units, a negative net among them) are numbers, written as digits and never
guarded. JSON lines are not opened by spreadsheets: their values are written as they are.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import orjson

from payorch.exports.columns import Cell

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
GUARD = "'"


def guarded(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet runs (see the module's docstring)."""
    return GUARD + text if text.startswith((*FORMULA_START, GUARD)) else text


def _csv_cell(value: Cell) -> str | int:
    if value is None:
        return ""
    return guarded(value) if isinstance(value, str) else value


class CsvWriter:
    media_type = "text/csv; charset=utf-8"

    def __init__(self, names: Sequence[str]) -> None:
        self._names = names
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer)

    def _taken(self) -> bytes:
        text = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return text.encode()

    def start(self) -> bytes:
        self._writer.writerow(self._names)
        return self._taken()

    def rows(self, rows: Sequence[Sequence[Cell]]) -> bytes:
        self._writer.writerows([_csv_cell(value) for value in row] for row in rows)
        return self._taken()


class JsonLinesWriter:
    media_type = "application/x-ndjson"

    def __init__(self, names: Sequence[str]) -> None:
        self._names = names

    def start(self) -> bytes:
        return b""

    def rows(self, rows: Sequence[Sequence[Cell]]) -> bytes:
        names = self._names
        return b"".join(orjson.dumps(dict(zip(names, row, strict=True))) + b"\n" for row in rows)


Writer = CsvWriter | JsonLinesWriter


def writer_for(format: str, names: Sequence[str]) -> Writer:
    return CsvWriter(names) if format == "csv" else JsonLinesWriter(names)
