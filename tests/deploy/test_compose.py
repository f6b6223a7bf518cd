"""deploy/compose.yaml (docs/deployment.md, "Run it on one machine for real"): it parses, names
only files that exist, and its services and their dependencies agree: each dependency is a
service, waits on something the dependency can say (a health check it has, a one-shot that
exits), and the payorch services run real commands with real settings. The checks are also
shown to catch a planted mistake of each kind."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from payorch.cli import _parser
from payorch.config import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"
CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}
PAYORCH = {"migrate", "api", "worker"}
VARIABLE = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)")


def load() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def has_healthcheck(service: dict[str, Any]) -> bool:
    check = service.get("healthcheck")
    if check is not None:
        return not check.get("disable", False) and bool(check.get("test"))
    build = service.get("build")  # the image's own HEALTHCHECK
    return (
        build is not None
        and "\nHEALTHCHECK " in (COMPOSE.parent / build["context"] / build["dockerfile"]).read_text()
    )


def problems(compose: dict[str, Any], base: Path) -> list[str]:
    """Every inconsistency found, one line each."""
    found: list[str] = []
    services: dict[str, dict[str, Any]] = compose["services"]
    volumes = set(compose.get("volumes") or {})
    for name, service in services.items():
        build = service.get("build")
        if build is not None:
            context = base / build["context"]
            if not (context / build.get("dockerfile", "Dockerfile")).is_file():
                found.append(f"{name}: no {build.get('dockerfile')} in {context}")
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith((".", "/")):
                if not (base / source).exists():
                    found.append(f"{name}: mounts {source}, which does not exist")
            elif source not in volumes:
                found.append(f"{name}: volume {source} is not declared")
        for dependency, wait in (service.get("depends_on") or {}).items():
            condition = wait.get("condition")
            other = services.get(dependency)
            if other is None:
                found.append(f"{name}: depends on {dependency}, which is no service")
            elif condition not in CONDITIONS:
                found.append(f"{name}: waits for {dependency} with {condition!r}")
            elif condition == "service_healthy" and not has_healthcheck(other):
                found.append(f"{name}: waits for {dependency} to be healthy; it has no health check")
            elif condition == "service_completed_successfully" and other.get("restart") != "no":
                found.append(f"{name}: waits for {dependency} to finish; it restarts")

    def reaches(start: str, seen: tuple[str, ...]) -> None:
        for dependency in services.get(start, {}).get("depends_on") or {}:
            if dependency in seen:
                found.append(f"dependency cycle: {' -> '.join((*seen, dependency))}")
            else:
                reaches(dependency, (*seen, dependency))

    for name in services:
        reaches(name, (name,))
    return found


def test_it_parses_and_has_the_services_of_the_docs() -> None:
    compose = load()
    assert set(compose["services"]) == {"postgres", "redis", "migrate", "api", "worker", "nginx"}


def test_files_and_dependencies_are_consistent() -> None:
    assert problems(load(), COMPOSE.parent) == []


def test_the_checks_catch_a_planted_mistake_of_each_kind() -> None:
    compose = load()
    broken = copy.deepcopy(compose)
    services = broken["services"]
    services["nginx"]["volumes"] = ["./nginx/missing.conf:/etc/nginx/templates/default.conf.template:ro"]
    services["migrate"]["build"] = {**services["migrate"]["build"], "dockerfile": "Dockerfile.missing"}
    services["api"]["depends_on"]["cache"] = {"condition": "service_started"}
    services["worker"]["depends_on"]["api"] = {"condition": "service_healthy"}
    services["worker"]["depends_on"]["migrate"] = {"condition": "service_completed_successfully"}
    services["migrate"]["restart"] = "always"
    services["redis"]["healthcheck"] = {"disable": True}
    services["postgres"]["depends_on"] = {"nginx": {"condition": "service_started"}}
    found = "\n".join(problems(broken, COMPOSE.parent))
    for expected in (
        "nginx: mounts ./nginx/missing.conf",
        "migrate: no Dockerfile.missing",
        "api: depends on cache, which is no service",
        "worker: waits for migrate to finish; it restarts",
        "api: waits for redis to be healthy; it has no health check",
        "dependency cycle: nginx -> api",
    ):
        assert expected in found, found
    assert "worker: waits for api" not in found  # api has a health check
    del services["api"]["healthcheck"]
    assert "worker: waits for api" not in "\n".join(problems(broken, COMPOSE.parent))  # the image's


def test_the_payorch_services_run_real_commands_with_real_settings() -> None:
    services = load()["services"]
    settings = {
        f"{Settings.model_config.get('env_prefix', '')}{name}".upper() for name in Settings.model_fields
    }
    for name in PAYORCH:
        service = services[name]
        assert service["read_only"] is True, name
        _parser().parse_args(service["command"])  # exits (status 2) on an unknown command or flag
        assert set(service["environment"]) <= settings, name
    # Everything the payorch services share comes from one place (the x-payorch anchor).
    assert (
        len(
            {
                repr(
                    {
                        k: v
                        for k, v in services[n].items()
                        if k not in ("command", "healthcheck", "depends_on", "restart")
                    }
                )
                for n in PAYORCH
            }
        )
        == 1
    )


def test_nginx_gets_every_placeholder_of_the_shipped_config_and_reaches_the_api() -> None:
    services = load()["services"]
    nginx = services["nginx"]
    source, target = nginx["volumes"][0].split(":")[:2]
    assert (COMPOSE.parent / source).resolve() == ROOT / "deploy" / "nginx" / "payorch.conf"
    # The official image renders /etc/nginx/templates/NAME.template into conf.d/NAME; default.conf
    # replaces its own server on port 80 (which would otherwise answer first).
    assert target == "/etc/nginx/templates/default.conf.template"
    placeholders = set(VARIABLE.findall((ROOT / "deploy" / "nginx" / "payorch.conf").read_text()))
    assert placeholders == set(nginx["environment"])
    command = services["api"]["command"]
    port = command[command.index("--port") + 1]
    assert f"127.0.0.1:{port}/healthz" in " ".join(services["api"]["healthcheck"]["test"])
    assert nginx["environment"]["PAYORCH_UPSTREAM_SERVERS"] == f"server api:{port};"
    assert nginx["ports"][0].rsplit(":", 1)[1] == nginx["environment"]["PAYORCH_LISTEN"]


@pytest.mark.parametrize("variable", sorted(set(VARIABLE.findall(COMPOSE.read_text()))))
def test_every_variable_it_reads_is_in_the_docs(variable: str) -> None:
    section = (ROOT / "docs" / "deployment.md").read_text().split("## Run it on one machine for real", 1)
    assert len(section) == 2, "docs/deployment.md has no 'Run it on one machine for real' section"
    assert f"`{variable}`" in section[1].split("\n## ", 1)[0]
