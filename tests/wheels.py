"""Wheels built from a copy of the checkout and installed into fresh virtual environments: the
server's (tests/test_installed_wheel.py) and the client's, payorch-client (clients/python;
tests/test_client_package.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_SHIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")


def clean_env(**settings: str) -> dict[str, str]:
    """The caller's environment without anything that points into the checkout or its venv."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYORCH_") and k not in dropped}
    env["PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE"] = "true"  # the receiver listens on loopback
    env.update(settings)
    return env


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def build_wheel(work: Path) -> Path:
    """From a copy of the checkout: a build/ folder left in the checkout by an earlier build
    would otherwise put its stale files into this wheel."""
    source = work / "source"
    shutil.copytree(ROOT / "src", source / "src", ignore=NOT_SHIPPED)
    for top in [
        "pyproject.toml",
        *(p.name for p in ROOT.glob("README*")),
        *(p.name for p in ROOT.glob("LICENSE*")),
    ]:
        shutil.copy(ROOT / top, source / top)
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(source)], work
    )
    (wheel,) = (work / "dist").glob("payorch-*.whl")
    return wheel


def build_client_wheel(work: Path) -> Path:
    """payorch-client's wheel, from a copy of src/, clients/python and pyproject.toml (the
    version's place among them), as build_wheel does for the server."""
    source = work / "client-source"
    shutil.copytree(ROOT / "src", source / "src", ignore=NOT_SHIPPED)
    shutil.copytree(ROOT / "clients" / "python", source / "clients" / "python", ignore=NOT_SHIPPED)
    shutil.copy(ROOT / "pyproject.toml", source / "pyproject.toml")
    client = str(source / "clients" / "python")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), client], work)
    (wheel,) = (work / "dist").glob("payorch_client-*.whl")
    return wheel


def new_venv(venv: Path) -> Path:
    """A virtual environment without pip (``pip_into`` installs into it): its python."""
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], venv.parent)
    return venv / "bin" / "python"


def pip_into(python: Path) -> list[str]:
    return [sys.executable, "-m", "pip", "--python", str(python)]  # the new one has no pip


def install_beside_project_dependencies(python: Path, wheel: Path, work: Path) -> None:
    """``wheel`` into the environment of ``python``, its dependencies from the project's through
    a .pth file: a plain path line, so the project's own .pth files (the editable install of
    payorch) are not run and only the wheel's payorch can be imported."""
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], work)
    ours = dict.fromkeys(sysconfig.get_path(kind) for kind in ("purelib", "platlib"))
    pth = Path(purelib.stdout.strip(), "project-dependencies.pth")
    pth.write_text("".join(f"{path}\n" for path in ours))
    run([*pip_into(python), "install", "-q", "--no-deps", "--no-index", str(wheel)], work)
