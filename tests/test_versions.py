"""One version (payorch.__version__) in every place that states it: the package's metadata,
pyproject.toml's pointer to it, `payorch --version`, the OpenAPI document's info.version and
CHANGELOG.md's newest heading; each release named there names a whole commit hash."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import httpx
import pytest

from payorch import __version__
from payorch.cli import main
from tests.releases import previous_release, releases

ROOT = Path(__file__).resolve().parent.parent


def test_pyproject_reads_the_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "payorch.__version__"}


def test_the_installed_metadata_has_the_version() -> None:
    """The editable install's metadata is written at install time: make's stamp depends on
    src/payorch/__init__.py, so a changed version reinstalls."""
    assert importlib.metadata.version("payorch") == __version__


def test_payorch_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"payorch {__version__}\n"


async def test_the_openapi_document_states_it(client: httpx.AsyncClient) -> None:
    answer = await client.get("/openapi.json")
    assert answer.status_code == 200 and answer.json()["info"]["version"] == __version__


def test_the_changelogs_newest_heading_is_this_version() -> None:
    """`X.dev0` on main between releases (heading `## X (unreleased)`); `X` on the release's
    own commit, whose hash the next commit writes into the heading."""
    newest = releases()[0]
    assert newest.version == __version__.removesuffix(".dev0"), (newest, __version__)
    assert newest.commit is None or not __version__.endswith(".dev0"), newest


def test_each_release_names_a_whole_commit() -> None:
    named = [release for release in releases() if release.commit is not None]
    assert named and named[0] == previous_release()
    for release in named:
        assert re.fullmatch(r"[0-9a-f]{40}", release.commit or ""), release
    assert len({release.version for release in releases()}) == len(releases())
