"""A PostgreSQL primary and its streaming replica of the test's own, on free ports.

The machine's cluster allows no replication connections and is left alone: both clusters are
made here with ``initdb``, ``pg_basebackup -R`` and ``pg_ctl``, as the ``postgres`` user when the
tests run as root (PostgreSQL refuses to run as root), in a temporary folder removed at the end.
Every command is time-bound. pg_stat_statements is loaded on both (the replica copies the
primary's configuration), so a test can count the statements each one ran.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.needs import missing

COMMAND_TIMEOUT_SECONDS = 60
START_TIMEOUT_SECONDS = 30


@dataclass(frozen=True, slots=True)
class Clusters:
    bin: Path
    root: Path
    primary_port: int
    replica_port: int

    @property
    def primary_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.primary_port}/postgres"

    @property
    def replica_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.replica_port}/postgres"

    def stop_replica(self) -> None:
        self.pg_ctl("replica", "stop", "-m", "fast")

    def pg_ctl(self, cluster: str, *args: str) -> None:
        log = str(self.root / f"{cluster}.log")
        run(
            self.bin / "pg_ctl",
            "-D",
            str(self.root / cluster),
            "-l",
            log,
            "-w",
            "-t",
            str(START_TIMEOUT_SECONDS),
            *args,
        )


def _binaries() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_basebackup"))
    if not found:
        missing("PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) are not installed")
    return Path(found[-1]).parent


def _as_postgres() -> list[str]:
    """The prefix that runs a command as the ``postgres`` user when we are root."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        missing("no postgres user to run the test's own clusters as")
    return ["runuser", "-u", "postgres", "--"]


def run(*command: str | Path) -> None:
    subprocess.run(
        [*_as_postgres(), *map(str, command)],
        check=True,
        capture_output=True,
        timeout=COMMAND_TIMEOUT_SECONDS,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _configure_primary(data: Path, root: Path, port: int) -> None:
    settings = [
        "wal_level = replica",
        "max_wal_senders = 4",
        "hot_standby = on",
        "listen_addresses = '127.0.0.1'",
        f"port = {port}",
        f"unix_socket_directories = '{root}'",
        "shared_preload_libraries = 'pg_stat_statements'",
        "fsync = off",  # a throwaway cluster
    ]
    with (data / "postgresql.conf").open("a") as conf:
        conf.write("\n".join(settings) + "\n")
    with (data / "pg_hba.conf").open("a") as hba:
        hba.write("host replication all 127.0.0.1/32 trust\n")


@contextmanager
def primary_and_replica() -> Iterator[Clusters]:
    """Both clusters running, the replica streaming from the primary; stopped and removed after,
    also when starting them failed half-way."""
    binaries = _binaries()
    prefix = _as_postgres()
    root = Path(tempfile.mkdtemp(prefix="payorch-replica-"))
    if prefix:
        shutil.chown(root, "postgres")
    clusters = Clusters(binaries, root, free_port(), free_port())
    try:
        run(binaries / "initdb", "-D", root / "primary", "-A", "trust", "-U", "postgres", "--no-sync")
        # The ownership of files we write as root: the appended lines only, files stay theirs.
        _configure_primary(root / "primary", root, clusters.primary_port)
        clusters.pg_ctl("primary", "start")
        run(
            binaries / "pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            str(clusters.primary_port),
            "-U",
            "postgres",
            "-D",
            root / "replica",
            "-R",
            "-X",
            "stream",
        )
        with (root / "replica" / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {clusters.replica_port}\n")
        clusters.pg_ctl("replica", "start")
        yield clusters
    except subprocess.CalledProcessError as exc:
        raise AssertionError(f"{exc.cmd}: {exc.stderr.decode(errors='replace')}") from exc
    finally:
        for cluster in ("replica", "primary"):
            if (root / cluster / "postmaster.pid").exists():
                try:
                    clusters.pg_ctl(cluster, "stop", "-m", "immediate")
                except (subprocess.SubprocessError, OSError):
                    pass  # the folder goes anyway; a stray server dies without it
        shutil.rmtree(root, ignore_errors=True)
