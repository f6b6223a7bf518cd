"""The locked dependencies (README.md, Setup): uv.lock matches pyproject.toml, a stale one fails
`uv lock --check` (the first step of `make test`), the tests' environment is exactly the lock,
with the uv the Makefile pins, and every package comes from PyPI. Each runs uv, the one in the
tests' environment (make installs it there)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
UV = Path(sys.executable).parent / "uv"


def uv(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(UV), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_lock_matches_pyproject() -> None:
    done = uv("lock", "--check")
    assert done.returncode == 0, done.stderr


def test_a_stale_lock_fails_the_check(tmp_path: Path) -> None:
    """pyproject.toml gains a dependency the lock lacks: `uv lock --check` fails and says how to
    mend it; `uv lock` does, and the check passes again."""
    (tmp_path / "src" / "payorch").mkdir(parents=True)
    shutil.copy(ROOT / "src" / "payorch" / "__init__.py", tmp_path / "src" / "payorch")  # the version
    for name in ("pyproject.toml", "uv.lock"):
        shutil.copy(ROOT / name, tmp_path / name)
    assert uv("lock", "--check", cwd=tmp_path).returncode == 0
    pyproject = tmp_path / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace('    "httpx>=0.27",\n', '    "httpx>=0.27",\n    "six>=1.16",\n', 1))
    assert pyproject.read_text() != text

    stale = uv("lock", "--check", cwd=tmp_path)
    assert stale.returncode == 1, (stale.returncode, stale.stderr)
    assert "The lockfile at `uv.lock` needs to be updated" in stale.stderr, stale.stderr
    assert "run `uv lock`" in stale.stderr, stale.stderr
    mended = uv("lock", cwd=tmp_path)
    assert mended.returncode == 0, mended.stderr
    assert 'name = "six"' in (tmp_path / "uv.lock").read_text()
    assert uv("lock", "--check", cwd=tmp_path).returncode == 0


def test_the_tests_environment_is_the_lock() -> None:
    """What `make` installed is what the lock says, nothing missing, no other version."""
    done = uv(
        "sync", "--frozen", "--inexact", "--extra", "dev", "--check", UV_PROJECT_ENVIRONMENT=sys.prefix
    )
    assert done.returncode == 0, done.stderr


def test_uv_is_the_one_the_makefile_pins() -> None:
    pinned = re.search(r"^UV_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert pinned is not None
    version = uv("--version")
    assert version.stdout.split()[:2] == ["uv", pinned[1]], version.stdout


def test_every_locked_package_comes_from_pypi() -> None:
    """uv reads no pip configuration: a local index or wheel folder of this machine never enters."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    sources = {
        package["name"]: package["source"] for package in lock["package"] if package["name"] != "payorch"
    }
    assert sources and {str(source) for source in sources.values()} == {
        str({"registry": "https://pypi.org/simple"})
    }
    for package in lock["package"]:
        if package["name"] != "payorch":
            files = package.get("wheels", []) + ([package["sdist"]] if "sdist" in package else [])
            assert files and all(f["hash"].startswith("sha256:") for f in files), package["name"]
