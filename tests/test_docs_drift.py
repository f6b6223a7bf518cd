"""The docs' counts and lists, checked against the code they describe: the newest migration and
how many there are (README), how many providers there are and their MOCK priorities (README,
quickstart, no "both providers"), the dashboard's pages (docs/dashboard.md's table), and the
simulator names the controls accept (docs/api.md). A new migration, provider or page fails here
until the docs say it."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.routing import APIRoute

from payorch.dashboard.routes import ROUTERS
from payorch.providers.registry import REGISTRATIONS

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
