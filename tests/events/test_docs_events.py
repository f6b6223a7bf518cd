"""docs/api.md's event table ("Outgoing notices") against the event catalogue: one row per event
type, its ``data`` column naming exactly the model's fields in order (``?`` on those absent when
they do not apply); docs/concepts.md links to it rather than repeating it."""

from __future__ import annotations

import re
from pathlib import Path

from payorch.events.catalogue import CATALOGUE

DOCS = Path(__file__).resolve().parents[2] / "docs"
ROW = re.compile(r"^\| `([a-z_.]+)` \| `([a-z_?, ]+)` \|", re.MULTILINE)


def _table() -> dict[str, list[str]]:
    text = (DOCS / "api.md").read_text()
    section = text[text.index("### Outgoing notices") :]
    section = section[: section.index("\n## ")]
    rows = ROW.findall(section)
    table = dict(rows)
    assert len(table) == len(rows), "an event type twice in the table"
    return {event_type: fields.split(", ") for event_type, fields in table.items()}


def test_the_docs_table_states_each_event_and_its_fields_as_the_catalogue() -> None:
    table = _table()
    assert list(table) == list(CATALOGUE)  # every type, in the catalogue's order
    for event_type, model in CATALOGUE.items():
        stated = [name + ("" if field.is_required() else "?") for name, field in model.model_fields.items()]
        assert table[event_type] == stated, event_type


def test_the_table_is_stated_once() -> None:
    concepts = (DOCS / "concepts.md").read_text()
    assert "api.md#outgoing-notices" in concepts
    for event_type in CATALOGUE:
        assert f"| `{event_type}` |" not in concepts
