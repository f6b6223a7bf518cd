"""The settings tables of README.md and docs/deployment.md list exactly the settings of
`payorch.config.Settings`, each with its default.

Settings are defined once, in src/payorch/config.py; the tables repeat the names and defaults
for readers, so this test keeps them true. When it fails, the message says which row to add,
fix or remove.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic.fields import FieldInfo

from payorch.config import Settings

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/deployment.md")
# Variables that a library reads itself (not payorch's settings), allowed in the tables.
LIBRARY_VARIABLES = {"PROMETHEUS_MULTIPROC_DIR"}
UNSET = "unset"  # how a table writes a default of None (the cell starts with it)
CODE = re.compile(r"`([^`]*)`")


def variable_of(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias or field.alias
    if isinstance(alias, str):
        return alias.upper()
    return f"{Settings.model_config.get('env_prefix', '')}{name}".upper()


def written(default: object) -> str:
    """A default as the tables write it (inside backticks), or UNSET for None."""
    if default is None:
        return UNSET
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return str(default)


def expected_settings() -> dict[str, str]:
    return {
        variable_of(name, field): written(field.get_default(call_default_factory=True))
        for name, field in Settings.model_fields.items()
    }


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def settings_table(text: str) -> list[list[str]]:
    """The rows of the one table whose header starts `| variable | default |`."""
    lines = text.splitlines()
    tables = [
        index
        for index, line in enumerate(lines)
        if line.startswith("|") and cells(line)[:2] == ["variable", "default"]
    ]
    assert len(tables) == 1, f"expected one table headed `| variable | default |`, found {len(tables)}"
    rows = []
    for line in lines[tables[0] + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(cells(line))
    return rows


def problems(path: Path, expected: dict[str, str]) -> list[str]:
    """What is wrong with the settings table of ``path``, each naming its variable."""
    found: dict[str, str] = {}
    errors = []
    for row in settings_table(path.read_text()):
        names = CODE.findall(row[0])
        if len(names) != 1:
            errors.append(f"row {row[0]!r}: write one variable per row, in backticks")
            continue
        name, default = names[0], row[1] if len(row) > 1 else ""
        if name in found:
            errors.append(f"{name} is listed twice")
        found[name] = default
        if name not in expected and name not in LIBRARY_VARIABLES:
            errors.append(f"{name} is listed but payorch.config.Settings has no such setting: remove the row")
    for name, default in expected.items():
        shown = UNSET if default == UNSET else f"`{default}`"
        if name not in found:
            errors.append(f"{name} is missing: add the row | `{name}` | {shown} | ... |")
            continue
        cell = found[name]
        if default == UNSET:
            good = cell.startswith(UNSET)
        else:
            spans = CODE.findall(cell)
            good = bool(spans) and spans[0] == default and cell.startswith("`")
        if not good:
            errors.append(f"{name}: the default cell {cell!r} must start with {shown}")
    return errors


def test_settings_have_defaults_the_tables_can_write() -> None:
    expected = expected_settings()
    assert "PAYORCH_DATABASE_URL" in expected and expected["PAYORCH_SIMULATOR_ENABLED"] == "true"
    assert expected["PAYORCH_PROVIDER_TIMEOUT_SECONDS"] == "10"
    assert expected["PAYORCH_REDIS_URL"] == UNSET


@pytest.mark.parametrize("doc", DOCS)
def test_settings_table_matches_config(doc: str) -> None:
    errors = problems(ROOT / doc, expected_settings())
    if errors:
        pytest.fail(f"{doc}: settings table vs payorch.config.Settings:\n  " + "\n  ".join(errors))


def test_a_missing_or_wrong_setting_is_named(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "| variable | default |\n|---|---|\n"
        "| `PAYORCH_RATE_LIMIT` | `5/second` |\n| `PAYORCH_NOT_A_SETTING` | `1` |\n"
    )
    errors = problems(doc, {"PAYORCH_RATE_LIMIT": "100/second", "PAYORCH_REDIS_URL": UNSET})
    assert errors == [
        "PAYORCH_NOT_A_SETTING is listed but payorch.config.Settings has no such setting: remove the row",
        "PAYORCH_RATE_LIMIT: the default cell '`5/second`' must start with `100/second`",
        "PAYORCH_REDIS_URL is missing: add the row | `PAYORCH_REDIS_URL` | unset | ... |",
    ]
