"""The docs' counts and lists, checked against the code they describe: the newest migration and
how many there are (README), how many providers there are and their MOCK priorities (README,
quickstart, no "both providers"), every list of the providers in README, docs/quickstart.md,
docs/api.md and docs/concepts.md (each names every registered provider, in the registry's order,
concepts.md with its credentials), the dashboard's pages (docs/dashboard.md's table), and the
simulator names the controls accept (docs/api.md), a row for every provider in each table written
per provider and a section per provider in docs/simulator.md, and every field of the records a
provider declares and of those its simulator answers, and every method of the Protocols its
registration points to (docs/providers.md, read from the dataclasses and Protocols). A new
migration, provider, page or registration field fails here until the docs say it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from fastapi.routing import APIRoute

from payorch.dashboard.routes import ROUTERS
from payorch.providers.holds import HoldCalls
from payorch.providers.reconciliation import ReconciliationReader
from payorch.providers.registration import HoldSupport, Notifications, ProviderRegistration
from payorch.providers.registry import REGISTRATIONS
from payorch.simulator.discrepancies.records import Discrepancies
from payorch.simulator.simulated import Bought, BuyerReturn, Settlement, SimulatedHolds, SimulatedProvider

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ROOT / "src" / "payorch" / "db" / "migrations" / "versions"
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}
# GET routes of the dashboard that are not pages of the table: where a person signs in, the
# download a page's form asks for, the return from the simulator (it redirects), the files.
NOT_PAGES = {"", "/sign-in", "/exports/download", "/sandbox/returned", "/assets/{}"}


def read(name: str) -> str:
    """A doc's text with its line breaks and runs of spaces as one space."""
    return " ".join((ROOT / name).read_text().split())


def docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_names_the_newest_migration_and_the_count() -> None:
    numbers = sorted(int(p.name[:4]) for p in VERSIONS.glob("[0-9][0-9][0-9][0-9]_*.py"))
    assert numbers == list(range(1, len(numbers) + 1)), "migrations are numbered 0001.. without gaps"
    newest = f"{numbers[-1]:04d}"
    readme = read("README.md")
    assert f"to {newest}: {len(numbers)} revision(s) applied" in readme, (
        f"README: `migrate` says 'to {newest}: {len(numbers)} revision(s) applied'"
    )
    assert f"the newest migration ({newest})" in readme


def test_the_docs_count_the_providers_and_list_each() -> None:
    count = NUMBERS[len(REGISTRATIONS)]
    for name in ("README.md", "docs/quickstart.md"):
        assert f"a MOCK connector for each of the {count} providers" in read(name), name
    if len(REGISTRATIONS) != 2:
        wrong = [p.name for p in docs() if "both providers" in " ".join(p.read_text().split())]
        assert wrong == [], f"{wrong} say 'both providers'; there are {count}"
    listed = ", ".join(f"`{r.provider_id}` priority {r.mock_priority}" for r in REGISTRATIONS)
    assert listed in read("docs/quickstart.md"), f"quickstart: list them as {listed}"


# Where the docs list the providers: (doc, the words the list starts with, ``{count}`` for how
# many providers there are; the list ends with its line or its paragraph; it names the providers
# by id or by simulator name). The quickstart's list is checked above, with the priorities.
PROVIDER_LISTS = [
    ("README.md", "{Count} providers are spoken, each with its real wire protocol", "paragraph", "id"),
    ("docs/concepts.md", "{Count} providers are spoken:", "paragraph", "id"),
    ("docs/api.md", "| `provider` | no | `auto` (default),", "line", "id"),
    ("docs/api.md", "- `provider`: `provider_", "line", "id"),
    ("docs/api.md", "`provider` accepts the full identifiers or the simulator's names:", "paragraph", "name"),
    ("docs/api.md", "| simulator provider names |", "line", "name"),
    ("docs/api.md", "| provider | read from | e.g. |", "paragraph", "id"),
    ("docs/quickstart.md", "the {count} providers (", "paragraph", "id"),
]


def listed(name: str, start: str, until: str) -> str:
    """The text of the list in doc ``name`` that begins with ``start``."""
    count = NUMBERS[len(REGISTRATIONS)]
    start = start.format(count=count, Count=count.capitalize())
    text = (ROOT / name).read_text()
    at = text.find(start)
    assert at >= 0, f"{name}: no list starting {start!r} (is the count of providers right?)"
    end = text.find("\n\n" if until == "paragraph" else "\n", at + len(start))
    return text[at : end if end >= 0 else len(text)]


@pytest.mark.parametrize(("name", "start", "until", "by"), PROVIDER_LISTS, ids=lambda v: str(v)[:24])
def test_each_list_of_providers_in_the_docs_names_every_registered_one(
    name: str, start: str, until: str, by: str
) -> None:
    words = listed(name, start, until)
    names = [r.provider_id if by == "id" else r.simulator_name for r in REGISTRATIONS]
    missing = [n for n in names if f"`{n}`" not in words]
    assert not missing, f"{name}: the list starting {start!r} misses {missing}"
    in_order = sorted(names, key=lambda n: words.index(f"`{n}`"))
    assert in_order == names, f"{name}: list them in the registry's order, {names}"


# Tables written per provider, found in every doc (so a new one is checked too): a table whose
# rows' first cells name two providers or more, by id or simulator name in backticks, or by the
# letter of its display name ("A (Webpay Plus)", "Provider B"). These are among them (the finder
# cannot silently find nothing).
KNOWN_TABLES = {
    "docs/api.md",
    "docs/deployment.md",
    "docs/providers.md",
    "docs/reconciliation.md",
    "docs/routing.md",
    "docs/simulator.md",
}
LETTER = re.compile(r"(?:\*\*)?(?:[Pp]rovider )?([A-Z])(?:\*\*)?(?: \(|$|:|,)")


def letter_of(registration: ProviderRegistration) -> str:
    """The provider's letter, as the docs name it: "Provider A (card form)" -> "A"."""
    return registration.display_name.split(" (")[0].removeprefix("Provider ")


def provider_tables(paths: list[Path]) -> list[tuple[str, str, list[str]]]:
    """(doc, the table's header line, the providers its rows name, in order of first mention)."""
    ids = {n: r.provider_id for r in REGISTRATIONS for n in (r.provider_id, r.simulator_name)}
    letters = {letter_of(r): r.provider_id for r in REGISTRATIONS}
    found = []
    for path in paths:
        tables: list[list[str]] = []
        before = ""
        for line in path.read_text().splitlines():
            if line.startswith("|"):
                if before.startswith("|"):
                    tables[-1].append(line)
                else:
                    tables.append([line])
            before = line
        for header, _, *rows in (t for t in tables if len(t) > 2):
            named: list[str] = []
            for row in rows:
                first = row.strip().strip("|").split("|")[0].strip()
                by_letter = LETTER.match(first)
                names = [ids[n] for n in re.findall(r"`([^`]+)`", first) if n in ids]
                if by_letter and by_letter.group(1) in letters:
                    names.append(letters[by_letter.group(1)])
                named += [n for n in names if n not in named]
            if len(named) >= 2:
                where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
                found.append((where, header, named))
    return found


def test_each_table_written_per_provider_has_a_row_for_every_registered_one() -> None:
    tables = provider_tables(docs())
    assert KNOWN_TABLES <= {doc for doc, *_ in tables}, "the table finder misses a known table"
    every = [r.provider_id for r in REGISTRATIONS]
    for doc, header, named in tables:
        missing = [p for p in every if p not in named]
        assert not missing, f"{doc}: the table {header!r} has no row for {missing}: write its row there"
        assert named == every, f"{doc}: the table {header!r}: put its rows in the registry's order, {every}"


def test_the_table_finder_sees_a_table_of_providers(tmp_path: Path) -> None:
    first, second, *_ = REGISTRATIONS
    (tmp_path / "x.md").write_text(
        "| provider | fact |\n|---|---|\n"
        f"| `{first.provider_id}` (its own words) | x |\n| `{second.simulator_name}` | y |\n\ntext\n\n"
        f"| field | x |\n|---|---|\n| `{first.provider_id}` | one provider: a note, not a table of them |\n\n"
        f"| provider | fact |\n|---|---|\n| {letter_of(second)} (its name) | x |\n| Provider {letter_of(first)} | y |\n"
        "| Ask | not a provider's letter |\n"
    )
    assert provider_tables([tmp_path / "x.md"]) == [
        ("x.md", "| provider | fact |", [first.provider_id, second.provider_id]),
        ("x.md", "| provider | fact |", [second.provider_id, first.provider_id]),
    ]


def test_the_holds_table_says_what_each_provider_declares() -> None:
    """docs/providers.md, "Holding and capturing": each row's declaration is the registration's."""
    section = (ROOT / "docs" / "providers.md").read_text().split("## Holding and capturing", 1)[1]
    rows = {}
    for line in section.split("| provider | declared | capture protocol |", 1)[1].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        found = LETTER.match(cells[0])
        rows[found.group(1) if found else cells[0]] = cells[1]
    for registration in REGISTRATIONS:
        declared = rows.get(letter_of(registration))
        assert declared is not None, (
            f"docs/providers.md's holds table has no row for {registration.provider_id}"
        )
        expected = "`None`" if registration.holds is None else f"`{registration.holds!r}`"
        assert declared.startswith(expected), (
            f"docs/providers.md's holds table: {registration.provider_id} declares {expected}, not {declared!r}"
        )


def test_the_simulator_docs_have_a_section_per_provider() -> None:
    # docs/providers.md, step 4: "docs/simulator.md: a section for the provider".
    headings = (ROOT / "docs" / "simulator.md").read_text().splitlines()
    for registration in REGISTRATIONS:
        heading = "## " + registration.display_name.split(" (")[0]
        assert heading in headings, f"docs/simulator.md has no section {heading!r}: write one"


def test_concepts_names_each_providers_credentials() -> None:
    words = listed("docs/concepts.md", "{Count} providers are spoken:", "paragraph")
    starts = sorted(words.index(f"`{r.provider_id}`") for r in REGISTRATIONS)
    for registration in REGISTRATIONS:
        at = words.index(f"`{registration.provider_id}`")
        own = words[at : next((s for s in starts if s > at), len(words))]
        missing = [f for f in registration.credential_fields if f"`{f}`" not in own]
        assert not missing, f"docs/concepts.md: {registration.provider_id}'s credentials miss {missing}"


# The records a provider declares (docs/providers.md, "The registrations, field by field"), the
# records its simulator's callables answer, and the Protocols its registration points to.
DECLARED = [
    ProviderRegistration,
    Notifications,
    HoldSupport,
    SimulatedProvider,
    SimulatedHolds,
    Settlement,
    Bought,
    BuyerReturn,
    Discrepancies,
]
PROTOCOLS = [HoldCalls, ReconciliationReader]


def documented_fields(text: str) -> dict[str, set[str]]:
    """Per record of that section's tables: the names in their first cells. A table under a
    ``### `Record` `` heading names its fields; a first cell `` `Record.method` `` names the
    record too; under a heading of several records, a row's first cell names the record and
    its second the field."""
    lines = text.splitlines()
    start = lines.index("## The registrations, field by field")
    found: dict[str, set[str]] = {}
    records: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("### "):
            records = re.findall(r"`(\w+)`", line.split("(")[0])
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or not records:
            continue
        first = cells[0].strip("`")
        if "." in first:
            record, name = first.split(".", 1)
        elif len(records) > 1 and first in records and len(cells) > 1 and cells[1].startswith("`"):
            record, name = first, cells[1].strip("`")
        else:
            record, name = records[0], first
        found.setdefault(record, set()).add(name)
    return found


PROVIDERS_MD = (ROOT / "docs" / "providers.md").read_text()


@pytest.mark.parametrize("record", DECLARED, ids=lambda r: r.__name__)
def test_providers_md_names_every_field_of_the_registrations(record: type) -> None:
    fields = {f.name for f in dataclasses.fields(record)}
    written = documented_fields(PROVIDERS_MD).get(record.__name__, set())
    assert fields - written == set(), f"docs/providers.md: {record.__name__}'s table misses these fields"
    assert written - fields == set(), f"docs/providers.md: {record.__name__} has no such fields"


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda r: r.__name__)
def test_providers_md_names_every_method_of_the_protocols(protocol: type) -> None:
    methods = {name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")}
    written = documented_fields(PROVIDERS_MD).get(protocol.__name__, set())
    assert methods and methods - written == set(), (
        f"docs/providers.md: {protocol.__name__}'s table misses these"
    )
    assert written - methods == set(), f"docs/providers.md: {protocol.__name__} has no such methods"


def test_the_field_reader_sees_each_form() -> None:
    text = (
        "## The registrations, field by field\n### `One` (`x.py`)\n| field | x |\n|---|---|\n| `a` | x |\n"
        "### `Two`, `Three` (`y.py`)\n| record | field | x |\n|---|---|---|\n| `Two` | `b` | x |\n"
        "| `Three` | `c` | x |\n### `P`\n| `P.m` | x |\n## Next\n| `d` | x |\n"
    )
    assert documented_fields(text) == {"One": {"a"}, "Two": {"b"}, "Three": {"c"}, "P": {"m"}}


def test_providers_md_says_where_notifications_go_and_what_runs_in_process() -> None:
    text = read("docs/providers.md")
    assert "### The notification URL" in text and "### What runs in process, and what must not" in text
    assert "{PAYORCH_PUBLIC_URL}/v1/provider-notifications/{provider}/{connector_id}" in text
    # How a simulator learns the URL, and the rule for what runs in process (issue 42's trap).
    learns = text.split("### The notification URL", 1)[1].split("### ", 1)[0]
    assert "A simulator learns the URL" in learns, "docs/providers.md: say how a simulator learns the URL"
    in_process = text.split("### What runs in process, and what must not", 1)[1].split("## ", 1)[0]
    assert "background task" in in_process and "outbox" in in_process, (
        "docs/providers.md: say that a simulator's notifications leave through its outbox, never from "
        "an in-process answer's background tasks"
    )


def test_the_controls_name_every_simulator() -> None:
    names = ", ".join(f"`{r.simulator_name}`" for r in REGISTRATIONS)
    assert f"`provider` accepts the full identifiers or the simulator's names: {names}." in read(
        "docs/api.md"
    )


def dashboard_pages() -> set[str]:
    """The GET paths of the dashboard without a path parameter (those are a page's records)."""
    paths = {
        route.path.removeprefix("/dashboard")
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute) and "GET" in route.methods and "{rest:path}" not in route.path
    }
    return {path for path in paths if "{" not in path} - NOT_PAGES


def table_paths() -> set[str]:
    """The first cells' `/dashboard/...` paths of docs/dashboard.md's page table."""
    lines = (ROOT / "docs" / "dashboard.md").read_text().splitlines()
    start = lines.index("| page | what it shows and does |")
    paths = set()
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        first = line.strip("|").split("|")[0]
        paths |= {
            p.removeprefix("/dashboard").split("?")[0] for p in re.findall(r"`(/dashboard[^`]*)`", first)
        }
    return paths


def test_the_dashboard_table_lists_every_page() -> None:
    pages, written = dashboard_pages(), table_paths()
    assert pages - written == set(), "docs/dashboard.md's table misses these pages"
    routes = {
        re.sub(r"\{[^}]*\}", "{}", route.path.removeprefix("/dashboard"))
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
    }
    unknown = {p for p in written if re.sub(r"\{[^}]*\}", "{}", p) not in routes}
    assert unknown == set(), "docs/dashboard.md's table names pages the dashboard does not have"
    assert {"/exports", "/reconciliation"} <= pages  # the check sees the pages it is about
