"""Rows as CSV (Python's csv module) or JSON lines (orjson), one batch of bytes at a time.

The formula guard (OWASP, "CSV Injection"): a spreadsheet runs a cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return as a formula, and spreadsheets skip leading
blanks and read look-alikes (a full-width ``＝``, a small ``﹦``) as the character they look like.
In CSV a text cell gets a ``'`` in front when it starts with a tab, a carriage return or ``'``, or
when its first visible character, after Unicode NFKC normalisation (which folds the look-alikes
into ASCII), is one of ``= + - @`` or the minus sign ``−``; invisible means whitespace (a space,
NBSP, U+3000, ``\x0b``, ``\x0c``, line breaks), control and format characters (a zero-width
space, a BOM, a soft hyphen) and combining marks. To read the value back, drop one leading ``'``
from a text cell that starts with one (guarding ``'`` too keeps that exact). Integer cells
(amounts in minor units, a negative net among them) are numbers, written as digits and never
guarded. JSON lines are not opened by spreadsheets: their values are written as they are.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Sequence

import orjson

from payorch.exports.columns import Cell

GUARD = "'"
ALWAYS_GUARDED = ("\t", "\r", GUARD)  # the guard itself, to keep the way back exact
FORMULA_START = frozenset("=+-@\u2212")  # after NFKC; U+2212 MINUS SIGN has no NFKC fold
# Unicode categories a spreadsheet shows as nothing before a formula: controls, format
# characters (zero-width space, BOM, soft hyphen), separators (spaces) and combining marks.
_INVISIBLE = frozenset(("Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me"))


def _first_visible(text: str) -> str:
    """The first character of ``text`` that is not invisible, after NFKC ("" if none)."""
    for char in text:
        if char.isascii() and not char.isspace() and char.isprintable():
            return char  # the usual case, without a Unicode lookup
        for folded in unicodedata.normalize("NFKC", char):
            if not folded.isspace() and unicodedata.category(folded) not in _INVISIBLE:
                return folded
    return ""


def guarded(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet runs (see the module's docstring)."""
    if text.startswith(ALWAYS_GUARDED) or _first_visible(text) in FORMULA_START:
        return GUARD + text
    return text


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
