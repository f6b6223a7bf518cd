"""docs/performance.md holds current figures, each with its command and date, and
docs/performance-decisions.md the measurements behind decisions already taken; code cites them.

In both, every ``##``/``###`` section that states a figure gives the command that produced it and
a date; every section bench/README.md's index names exists in one of them; performance.md stays
at 400 lines or fewer (current figures only: the evidence of a past decision moves out); no comment in src/ quotes a measured figure
(a comment cites a section of docs/performance.md instead).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PERFORMANCE = ROOT / "docs" / "performance.md"
DECISIONS = ROOT / "docs" / "performance-decisions.md"
MAX_LINES = 400
BENCH_README = ROOT / "bench" / "README.md"

HEADING = re.compile(r"^(#{2,3}) (.+?)\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"`([^`]+)`")
# A command as written to be run from the repository root.
COMMAND = re.compile(r"^\s*(PYTHONPATH=|\.venv/bin/|make |(\w+=\S+ )*bench/\S+\.sh\b)")
DATE = re.compile(r"\b2026-\d\d-\d\d\b")
# A measured figure: a number with a unit, or a number in a table's row.
FIGURE = re.compile(
    r"\d[\d,]*(\.\d+)?\s?(ms|us|µs|MB|MiB|GB|M|k|%|/s)(?!\w)"
    r"|^\|.*\d.*\|\s*$",
    re.MULTILINE,
)
# A measurement quoted in a comment (settings and limits, such as "a 5 s timeout", pass).
MEASURED_IN_COMMENT = re.compile(
    r"about \d[\d,.]*\s?(ns|us|µs|ms)\b"
    r"|\d[\d,.]*\s?(ns|us|µs|ms) (of CPU|more|less|per|a call|a statement|against)"
    r"|\d[\d,.]*\s?(payments|creates|deliveries|requests)/s\b"
    r"|\d[\d,.]*k? (fewer |more )?instructions"
    r"|\bmeasured\b[^.]*\d[\d,.]*\s?(ns|us|µs|ms|%|/s)",
    re.IGNORECASE,
)


def sections(text: str) -> dict[str, str]:
    """Each ``##``/``###`` heading's text (outside code blocks) and its body up to the next."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_fence = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else HEADING.match(line)
        if heading:
            current = found.setdefault(heading.group(2), [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(body) for name, body in found.items()}


def commands(body: str) -> list[str]:
    """The lines of fenced blocks and the code spans that are commands."""
    candidates: list[str] = []
    in_fence = False
    for line in body.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        elif in_fence:
            candidates.append(line)
        else:
            candidates.extend(CODE_SPAN.findall(line))
    return [text for text in candidates if COMMAND.match(text)]


def prose(body: str) -> str:
    """The body without fenced blocks and code spans (commands, paths and names hold numbers)."""
    kept: list[str] = []
    in_fence = False
    for line in body.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            kept.append(CODE_SPAN.sub("", line))
    return "\n".join(kept)


def sections_missing_command_or_date(text: str) -> list[str]:
    missing = []
    for name, body in sections(text).items():
        if not FIGURE.search(prose(body)):
            continue
        if not commands(body):
            missing.append(f"{name}: no command")
        if not DATE.search(name + "\n" + body):
            missing.append(f"{name}: no date")
    return missing


def index_sections(readme: str) -> list[str]:
    """The section names in the third column of bench/README.md's index table."""
    names: list[str] = []
    index = readme.split("## The index", 1)[1]
    for line in index.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or set(cells[2]) <= {"-"}:
            continue
        if cells[2].startswith("section of docs/performance.md"):
            continue
        names.extend(name.strip() for name in cells[2].split(";"))
    return names


def missing_index_sections(readme: str, text: str) -> list[str]:
    """Index names with no heading of that text (a trailing " (bench/...)" aside)."""
    headings = {re.sub(r" \([^()]*\)$", "", name) for name in sections(text)}
    return [name for name in index_sections(readme) if name not in headings]


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring and node.body:
                first = node.body[0].lineno
                found.extend((first + i, line) for i, line in enumerate(docstring.splitlines()))
    return found


def figures_in_comments(paths: list[Path]) -> list[str]:
    quoted = []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        # A docstring's sentence may run over two lines: look at each line with the next.
        lines = comments_and_docstrings(source)
        for (number, line), (_, following) in zip(lines, [*lines[1:], (0, "")][: len(lines)], strict=True):
            joined = line.rstrip() + " " + following.lstrip(" #")
            match = MEASURED_IN_COMMENT.search(joined)
            if match and match.start() < len(line.rstrip()):
                quoted.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}")
    return quoted


def test_every_section_with_a_figure_has_its_command_and_date() -> None:
    for page in (PERFORMANCE, DECISIONS):
        assert sections_missing_command_or_date(page.read_text(encoding="utf-8")) == [], page.name


def test_every_section_of_the_bench_index_exists() -> None:
    readme = BENCH_README.read_text(encoding="utf-8")
    assert index_sections(readme)
    both = PERFORMANCE.read_text(encoding="utf-8") + "\n" + DECISIONS.read_text(encoding="utf-8")
    assert missing_index_sections(readme, both) == []


def test_the_current_figures_fit_in_400_lines() -> None:
    lines = len(PERFORMANCE.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"docs/performance.md has {lines} lines: move a past decision's evidence out"


def test_no_comment_in_src_quotes_a_measured_figure() -> None:
    paths = sorted((ROOT / "src").rglob("*.py"))
    assert paths
    assert figures_in_comments(paths) == []
