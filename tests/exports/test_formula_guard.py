"""The CSV formula guard through GET /v1/exports/payments on SQLite and PostgreSQL: a formula
behind a look-alike of = + - @ (folded by NFKC) or behind leading whitespace and invisible
characters comes out guarded, a harmless value does not, and every value reads back exactly by
dropping one leading quote (docs/exports.md, "The formula guard")."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from itertools import count
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from payorch.runtime import Runtime
from tests.kit import Sandbox, authorized_payment

FORMULA = 'HYPERLINK("http://x","y")'
# What a spreadsheet reads as = + - @: the ASCII ones and their look-alikes.
DANGEROUS = ["=", "+", "-", "@", "＝", "＋", "－", "＠", "﹦", "﹢", "﹣", "\u2212"]
# What a spreadsheet skips before a formula: blanks, line breaks, invisible format characters.
INVISIBLE = [
    " ",
    "\u00a0",
    "\u3000",
    "\u200b",
    "\x0b",
    "\x0c",
    "\t",
    "\r",
    "\n",
    "\ufeff",
    "\u2060",
    "\u00ad",
]
# The cases, each a guarded cell.
FOUND = ["＝", "＋", "－", "＠", "﹦", " =", "\u00a0=", "\u3000=", "\u200b=", "\x0b=", "\x0c="]
HARMLESS = ["order-1", " order-2", "\u00a0x=1", "a=b", "1+1", "\u200border"]
_MILLIS = count(1)


def unguarded(cell: str) -> str:
    return cell[1:] if cell.startswith("'") else cell


async def exported(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, references: list[str]
) -> list[str]:
    """The CSV cells of ``references``, each a payment's external reference, in a millisecond
    window of their own (the sandbox is shared by hypothesis' examples)."""
    at_ms = int(runtime.clock.now().timestamp() * 1000) + 1000 * next(_MILLIS)
    made = [
        await authorized_payment(runtime, sandbox, at_ms=at_ms, external_reference=reference)
        for reference in references
    ]
    start = datetime.fromtimestamp(at_ms / 1000, UTC)
    window = f"from={quote(start.isoformat())}&to={quote((start + timedelta(milliseconds=1)).isoformat())}"
    response = await client.get(f"/v1/exports/payments?{window}&format=csv", headers=sandbox.headers)
    assert response.status_code == 200, response.text
    header, *rows = list(csv.reader(io.StringIO(response.text, newline="")))
    by_id = {row[header.index("payment_id")]: row[header.index("external_reference")] for row in rows}
    return [by_id[paid.payment_id] for paid in made]


async def test_look_alikes_and_leading_blanks_are_guarded_and_harmless_text_is_not(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    references = [prefix + FORMULA for prefix in FOUND] + HARMLESS
    cells = await exported(client, runtime, sandbox, references)
    for reference, cell in zip(references, cells, strict=True):
        assert cell.startswith("'") == (reference not in HARMLESS), repr(cell)
        assert unguarded(cell) == reference


@pytest.mark.slow  # 20 examples, each a payment and an export
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # one sandbox for all examples
)
@given(
    blanks=st.lists(st.sampled_from(INVISIBLE), max_size=4),
    start=st.sampled_from(DANGEROUS),
    rest=st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=20),
)
async def test_a_formula_behind_any_invisible_prefix_comes_out_guarded(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, blanks: list[str], start: str, rest: str
) -> None:
    reference = "".join(blanks) + start + rest
    [cell] = await exported(client, runtime, sandbox, [reference])
    assert cell.startswith("'"), repr(cell)
    assert unguarded(cell) == reference
