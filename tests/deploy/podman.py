"""The image test's machinery: a Debian base made by debootstrap (no registry is reachable here),
the wheels of payorch's dependencies on the host (the build runs offline), `podman build` of the
repository's Containerfile on that base, and containers run with podman on the host's network.

The base and the wheels are cached (`.cache/image/`, `deploy/wheelhouse/`, both ignored by git),
so only a first run pays for debootstrap and the downloads. Podman runs with runc: crun does not
work on this machine kind.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.needs import missing

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "image"
WHEELHOUSE = ROOT / "deploy" / "wheelhouse"
BASE = "localhost/payorch-test-base:bookworm"
# One tag per checkout: runs from two worktrees on one machine never build over each other's.
IMAGE = f"localhost/payorch-test:{hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]}"
# Debian's python3 and its venv module, all the Containerfile asks of a base.
DEBOOTSTRAP = ["--variant=minbase", "--include=python3,python3-venv", "bookworm"]
MIRROR = "http://deb.debian.org/debian"
SLIMMED = [
    "var/cache/apt/archives/*.deb",
    "var/cache/apt/*.bin",
    "var/lib/apt/lists/*_*",
    "usr/share/doc/*",
    "usr/share/man/*",
]


def tools() -> None:
    """podman, runc and debootstrap, or a skip (a failure in CI: .ci/run installs them)."""
    absent = [tool for tool in ("podman", "runc", "debootstrap") if shutil.which(tool) is None]
    if absent:
        missing(f"{', '.join(absent)} not installed (apt-get install podman runc debootstrap)")


def run(args: Sequence[str], timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603
    if check:
        assert done.returncode == 0, f"{' '.join(args)}: exit {done.returncode}\n{done.stderr[-3000:]}"
    return done


def podman(*args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(["podman", "--runtime", "runc", *args], timeout=timeout, check=check)


def base_image() -> str:
    """The debootstrap base as a podman image; its root file system is kept as a tar file."""
    if podman("image", "exists", BASE, check=False).returncode == 0:
        return BASE
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / "bookworm-python3.tar"
    if not tarball.exists():
        rootfs = CACHE / "rootfs"
        shutil.rmtree(rootfs, ignore_errors=True)
        run(["debootstrap", *DEBOOTSTRAP, str(rootfs), MIRROR], timeout=900)
        for leftover in SLIMMED:  # as Debian's slim images do: no package cache, lists or docs
            for path in rootfs.glob(leftover):
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        partial = tarball.with_suffix(".partial")
        run(["tar", "-C", str(rootfs), "-cf", str(partial), "."])
        partial.rename(tarball)
        shutil.rmtree(rootfs)
    podman("import", "--change", "CMD=/bin/bash", str(tarball), BASE)
    return BASE


def uv_version() -> str:
    """The uv the Makefile installs (and the Containerfile's UV_VERSION must name)."""
    found = re.search(r"^UV_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert found, "Makefile: no UV_VERSION"
    return found.group(1)


def wheelhouse() -> Path:
    """Every wheel the image's offline build needs in deploy/wheelhouse: uv.lock's requirements
    (exported by the venv's uv, with their hashes), uv itself and the build backend. Filled from
    the indexes once; later runs find everything there already."""
    WHEELHOUSE.mkdir(exist_ok=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    locked = CACHE / "requirements.txt"
    uv = str(Path(sys.executable).parent / "uv")
    run([uv, "export", "--project", str(ROOT), "--frozen", "--no-dev", "--no-emit-project", "--quiet",
         "--output-file", str(locked)])  # fmt: skip
    build_system = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(WHEELHOUSE)]
    for wanted in (["--no-deps", "-r", str(locked)], [f"uv=={uv_version()}", *build_system]):
        if run([*pip, "--no-index", "--find-links", str(WHEELHOUSE), *wanted], check=False).returncode != 0:
            run([*pip, *wanted], timeout=900)
    return WHEELHOUSE


def build_image() -> str:
    """The repository's Containerfile built offline on the debootstrap base."""
    base = base_image()
    wheelhouse()
    podman(
        "build",
        "--format", "docker",  # keeps HEALTHCHECK
        "--network", "none",  # offline: everything comes from deploy/wheelhouse
        "--build-arg", f"BASE_IMAGE={base}",
        "--build-arg", "PIP_OPTIONS=--no-index",
        "--build-arg", f"UV_VERSION={uv_version()}",
        "--tag", IMAGE,
        "--file", str(ROOT / "Containerfile"),
        str(ROOT),
        timeout=900,
    )  # fmt: skip
    return IMAGE


# Podman raises a container's open files and processes to its own defaults (about a million),
# which a machine without CAP_SYS_RESOURCE (this one) refuses: runc fails "error setting rlimit".
# Explicit limits under the host's work everywhere, and are far above what payorch opens.
LIMITS = ["--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"]


def environment(values: dict[str, str]) -> list[str]:
    return [arg for name, value in values.items() for arg in ("--env", f"{name}={value}")]


def payorch(env: dict[str, str], *args: str, timeout: float = 120) -> str:
    """One `payorch` command in a read-only container on the host's network; its stdout."""
    done = podman(
        "run",
        "--rm",
        "--read-only",
        "--network",
        "host",
        *LIMITS,
        *environment(env),
        IMAGE,
        *args,
        timeout=timeout,
    )
    return done.stdout


@contextmanager
def container(name: str, env: dict[str, str], *args: str) -> Iterator[str]:
    """A long-running `payorch` container (read-only, host network), removed on the way out;
    its log is printed when the block fails."""
    podman(
        "run",
        "--detach",
        "--name",
        name,
        "--read-only",
        "--network",
        "host",
        *LIMITS,
        *environment(env),
        IMAGE,
        *args,
    )
    try:
        yield name
    except BaseException:
        logs = podman("logs", name, check=False)
        print(f"--- log of {name}", logs.stdout[-4000:], logs.stderr[-4000:], sep="\n")
        raise
    finally:
        podman("rm", "--force", "--time", "5", name, check=False)
