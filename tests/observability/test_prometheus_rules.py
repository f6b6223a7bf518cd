"""deploy/prometheus: the rules load (`promtool check rules`), each alert fires on its failing
series and stays quiet on a healthy one (`promtool test rules`), and each has a runbook entry in
docs/operations.md. promtool is Debian's `prometheus` package (.ci/run installs it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.needs import missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "payorch.rules.yml"
RULE_TESTS = sorted((ROOT / "deploy" / "prometheus" / "tests").glob("*.yml"))
OPERATIONS = ROOT / "docs" / "operations.md"
PROMTOOL = Path("/usr/bin/promtool")


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    if not PROMTOOL.exists():
        missing("promtool (Debian package prometheus)")
    return subprocess.run([str(PROMTOOL), *args], capture_output=True, text=True, timeout=120, check=False)


def alerts() -> list[dict[str, object]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def test_promtool_checks_the_rules() -> None:
    done = promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr


def test_promtool_rule_tests_pass() -> None:
    assert RULE_TESTS
    done = promtool("test", "rules", *map(str, RULE_TESTS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_alert_is_tested_firing_and_quiet() -> None:
    firing: set[str] = set()
    quiet: set[str] = set()
    for path in RULE_TESTS:
        for case in yaml.safe_load(path.read_text())["tests"]:
            for check in case.get("alert_rule_test", []):
                (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    names = {str(rule["alert"]) for rule in alerts()}
    assert names - firing == set(), "alerts never shown firing"
    assert names - quiet == set(), "alerts never shown quiet"


def test_every_alert_links_its_runbook_entry() -> None:
    headings = {
        line.removeprefix("### ").strip().lower()
        for line in OPERATIONS.read_text().splitlines()
        if line.startswith("### ")
    }
    for rule in alerts():
        annotations = rule["annotations"]
        assert isinstance(annotations, dict)
        runbook = annotations["runbook"]
        assert runbook == f"docs/operations.md#{str(rule['alert']).lower()}", runbook
        assert str(rule["alert"]).lower() in headings, f"no '### {rule['alert']}' in docs/operations.md"


def test_a_broken_rule_fails_its_promtool_test(tmp_path: Path) -> None:
    # The test above can fail: with the provider alert's threshold gone, its quiet case fires.
    broken = RULES.read_text().replace(
        "max by (provider) (payorch_provider_health_state) == 1",
        "max by (provider) (payorch_provider_health_state) >= 0",
    )
    assert broken != RULES.read_text()
    (tmp_path / "payorch.rules.yml").write_text(broken)
    (tmp_path / "tests").mkdir()
    for path in RULE_TESTS:
        (tmp_path / "tests" / path.name).write_text(path.read_text())
    done = promtool("test", "rules", *(str(tmp_path / "tests" / p.name) for p in RULE_TESTS))
    assert done.returncode != 0
    assert re.search(r"alertname: PayorchProviderSkipped", done.stdout + done.stderr)
