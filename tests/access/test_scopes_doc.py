"""docs/access.md's "Scopes" table is the code's: every scope of payorch.access.scopes with what it
allows and the operations that need it (payorch.access.operations), in the table's order. A scope
or an operation added fails here until the doc says it; print the table to paste with

    PYTHONPATH=src:. .venv/bin/python -m tests.access.test_scopes_doc
"""

from __future__ import annotations

from pathlib import Path

from payorch.access import operations
from payorch.access.scopes import SCOPES

DOC = Path(__file__).resolve().parents[2] / "docs" / "access.md"


def scope_table() -> list[str]:
    lines = ["| scope | allows | operations |", "|---|---|---|"]
    for scope, allows in SCOPES.items():
        needing = [f"`{m} {p}`" for (m, p), s in operations.SCOPED.items() if s == scope]
        needing += [f"every `{p}...`" for p, s in operations.SCOPED_PREFIXES.items() if s == scope]
        lines.append(f"| `{scope}` | {allows} | {', '.join(needing) or 'none yet'} |")
    return lines


def test_the_scopes_section_lists_every_scope_and_its_operations() -> None:
    text = DOC.read_text()
    assert "\n## Scopes\n" in text
    section = text.split("\n## Scopes\n", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("|")]
    assert table == scope_table(), "docs/access.md, Scopes: paste\n" + "\n".join(scope_table())


if __name__ == "__main__":
    print("\n".join(scope_table()))
