"""Debian's pgbouncer in front of the tests' PostgreSQL (127.0.0.1:5432, trust), for
tests/test_pgbouncer.py and bench/pgbouncer_pooling.py."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PGBOUNCER = "/usr/sbin/pgbouncer"


def installed() -> str | None:
    """pgbouncer's path, or None (`apt-get install pgbouncer`; .ci/run installs it)."""
    return shutil.which("pgbouncer") or (PGBOUNCER if Path(PGBOUNCER).exists() else None)


def version() -> str:
    """e.g. "PgBouncer 1.18.0" (Debian bookworm: before 1.21's prepared statements)."""
    found = installed()
    assert found is not None
    return subprocess.run(
        [found, "--version"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def pgbouncer(mode: str, server_connections: int = 2, upstream_port: int = 5432) -> Iterator[int]:
    """pgbouncer with ``pool_mode = mode`` ("transaction" or "session") on a free port, passing
    every database to 127.0.0.1:``upstream_port``; at most ``server_connections`` server
    connections per database and user, so clients share them; yields its port."""
    found = installed()
    assert found is not None, "pgbouncer is not installed"
    port = free_port()
    # Readable by the user pgbouncer runs as: it refuses to run as root, so root runs it as nobody.
    folder = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    folder.chmod(0o755)
    users = folder / "users.txt"
    users.write_text('"postgres" ""\n"root" ""\n')  # trust: the user must still be listed
    config = folder / "pgbouncer.ini"
    config.write_text(
        "[databases]\n"
        f"* = host=127.0.0.1 port={upstream_port}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {users}\n"
        f"pool_mode = {mode}\n"
        f"default_pool_size = {server_connections}\nmax_client_conn = 1000\n"
        "ignore_startup_parameters = extra_float_digits\n"
    )
    for path in (users, config):
        path.chmod(0o644)
    as_nobody = ["-u", "nobody"] if os.geteuid() == 0 else []
    log = folder / "pgbouncer.log"
    with open(log, "w") as output:
        process = subprocess.Popen([found, *as_nobody, str(config)], stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while True:
            assert process.poll() is None, f"pgbouncer exited: {log.read_text()}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"pgbouncer did not listen in 15 s: {log.read_text()}"
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def through(database_url: str, port: int) -> str:
    """``database_url`` (postgresql://user@127.0.0.1:5432/name) through the pooler on ``port``."""
    prefix, name = database_url.rsplit("/", 1)
    return f"{prefix.rsplit(':', 1)[0]}:{port}/{name}"
