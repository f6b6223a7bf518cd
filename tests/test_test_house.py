"""The test tree's own rules (docs/testing in the README): no test module imports another test
module or a conftest.py (shared set-ups live in tests/kit.py and helper modules), and every test
module that starts a process or a browser, itself or through its directory's conftest.py, is
marked ``slow`` (``make test-fast`` leaves those out)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# What starts a process or a browser in this tree: names a module calls or imports.
STARTS = re.compile(
    r"\b(live_server|run_cli|start_worker|nginx_serving|OwnRedis|own_redis|subprocess|"
    r"create_subprocess_exec|create_subprocess_shell|Popen|async_playwright|sync_playwright|"
    r"chromium|started_server|serve_payorch)\b"
)
SLOW = re.compile(r"pytest\.mark\.slow\b|\bmark\.slow\b")


@functools.cache
def text(path: Path) -> str:
    return path.read_text()


@functools.cache
def modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def imported(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(text(path), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def is_test_module(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return name.startswith("tests.") and (last.startswith("test_") or last == "conftest")


def test_no_module_imports_a_test_module_or_a_conftest() -> None:
    offenders = {
        str(path.relative_to(TESTS)): bad
        for path in modules()
        if (bad := sorted({name for name in imported(path) if is_test_module(name)}))
    }
    assert offenders == {}


def starts_something(path: Path) -> bool:
    code = "\n".join(line for line in text(path).splitlines() if not line.lstrip().startswith("#"))
    return bool(STARTS.search(code))


def starting_fixtures(conftest: Path) -> set[str]:
    """The fixtures of a conftest.py whose own code starts a process or a browser."""
    source = text(conftest)
    return {
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any("fixture" in ast.unparse(d) for d in node.decorator_list)
        and STARTS.search(ast.get_source_segment(source, node) or "")
    }


@functools.cache
def starting_fixtures_above(directory: Path) -> frozenset[str]:
    conftests = [
        c
        for c in modules()
        if c.name == "conftest.py" and (c.parent == directory or c.parent in directory.parents)
    ]
    return frozenset().union(*(starting_fixtures(c) for c in conftests))


def uses_a_starting_fixture(path: Path) -> bool:
    """Whether the module names a starting fixture of a conftest.py above it."""
    return any(re.search(rf"\b{name}\b", text(path)) for name in starting_fixtures_above(path.parent))


def test_every_module_that_starts_a_process_or_a_browser_is_marked_slow() -> None:
    unmarked = [
        str(path.relative_to(TESTS))
        for path in modules()
        if path.name.startswith("test_")
        and path.name != Path(__file__).name
        and (starts_something(path) or uses_a_starting_fixture(path))
        and not SLOW.search(text(path))
    ]
    assert unmarked == []


def test_the_rules_catch_what_they_name(tmp_path: Path) -> None:
    """The two checks are not vacuous: a planted import and a planted browser are found."""
    planted = tmp_path / "test_planted.py"
    planted.write_text("from tests.webhooks.test_backoff import backlog\nimport tests.conftest\n")
    assert sorted(n for n in imported(planted) if is_test_module(n)) == [
        "tests.conftest",
        "tests.webhooks.test_backoff",
    ]
    browser = tmp_path / "test_planted_browser.py"
    browser.write_text("from playwright.async_api import async_playwright\n")
    assert starts_something(browser) and not SLOW.search(browser.read_text())


# A loopback address with a fixed port, as a test would write it.
LOOPBACK_PORT = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\]|0\.0\.0\.0):(\d+)\b")
# The services the suite is given (PostgreSQL, Redis): the only fixed ports a test may dial.
GIVEN_PORTS = {"5432", "6379"}
# Files whose other fixed loopback addresses are stored, printed or judged, never dialled.
NEVER_DIALLED = {
    "webhooks/test_url_rules.py": "URLs judged by the URL rules",
    "webhooks/test_endpoints_admin.py": "endpoint URLs stored and refused",
    "webhooks/test_endpoint_cap.py": "endpoint URLs stored up to the cap",
    "observability/test_logs.py": "an endpoint URL stored to look for its secret in the logs",
    "http/test_database_loss.py": "endpoint URLs stored while the connection is lost",
    "client/test_live.py": "an endpoint URL stored through the SDK",
    "users/test_users_cli.py": "the invite URL's default prefix, printed by the command line",
    "dashboard/roles_world.py": "endpoint URLs stored by the per-role tests (no worker sends)",
    "client/generate_async.py": "the example in the generated client's docstring",
    "cli/test_serve_address.py": "the URLs serve derives from an address, compared as text",
}


def fixed_ports(path: Path) -> set[str]:
    return set(LOOPBACK_PORT.findall(text(path)))


def test_no_test_dials_a_fixed_port_it_did_not_open() -> None:
    """A result never depends on what else runs on this machine (`make run` on 8000): a port a
    test dials is one it opened, or one tests.kit.refused_address holds for it."""
    offenders = {
        rel: sorted(ports)
        for path in modules()
        if (ports := fixed_ports(path) - GIVEN_PORTS)
        and (rel := str(path.relative_to(TESTS))) not in NEVER_DIALLED
        and path.name != Path(__file__).name
    }
    assert offenders == {}
    assert all((TESTS / rel).is_file() for rel in NEVER_DIALLED)  # the list names real files


def test_the_port_rule_finds_a_planted_port(tmp_path: Path) -> None:
    planted = tmp_path / "test_planted_port.py"
    planted.write_text('URL = "http://127.0.0.1:8000/v1"\nDB = "postgresql://127.0.0.1:5432/x"\n')
    assert fixed_ports(planted) - GIVEN_PORTS == {"8000"}
