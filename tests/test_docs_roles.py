"""docs/access.md's role x scope table is the code's (payorch.access.roles.ROLE_SCOPES), with
each scope's meaning from payorch.access.scopes.SCOPES: a scope or role added, or a grant
changed, fails here until the docs say so (the message prints the table to paste)."""

from __future__ import annotations

from pathlib import Path

from payorch.access.roles import ROLE_SCOPES, ROLES
from payorch.access.scopes import SCOPES

DOC = Path(__file__).resolve().parent.parent / "docs" / "access.md"


def expected_table() -> list[str]:
    head = "| scope | what it allows | " + " | ".join(ROLES) + " |"
    rule = "|---|---|" + "---|" * len(ROLES)
    rows = [
        f"| `{scope}` | {said} | "
        + " | ".join("yes" if scope in ROLE_SCOPES[role] else "—" for role in ROLES)
        + " |"
        for scope, said in SCOPES.items()
    ]
    return [head, rule, *rows]


def written_table() -> list[str]:
    lines = DOC.read_text().splitlines()
    section = lines[lines.index("## Roles") :]
    start = next(i for i, line in enumerate(section) if line.startswith("| scope |"))
    table = []
    for line in section[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    return table


def test_the_docs_roles_table_is_the_codes() -> None:
    expected = expected_table()
    assert written_table() == expected, "docs/access.md ## Roles should hold:\n" + "\n".join(expected)


def test_the_table_grants_every_role_something_and_refuses_the_viewer_every_write() -> None:
    # What the check above compares is not empty, and the table has the shape the docs describe.
    assert set(ROLE_SCOPES) == set(ROLES) and len(written_table()) == len(SCOPES) + 2
    assert not {scope for scope in ROLE_SCOPES["viewer"] if scope.endswith(":write")}
