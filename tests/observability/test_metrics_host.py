"""A real `payorch worker` with PAYORCH_WORKER_METRICS_PORT listens on loopback unless
PAYORCH_METRICS_HOST says otherwise (SQLite, PostgreSQL): read from the kernel's table of
listening sockets, /proc/net/tcp."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from payorch.config import Settings
from tests.live import START_SECONDS, free_port, payorch_env, stop_process

pytestmark = pytest.mark.slow

LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's st column


def listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses (dotted) a socket listens on at ``port``."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, _, hex_port = local.partition(":")
        if state == LISTEN and int(hex_port, 16) == port:
            # Little-endian hex of the address: 0100007F is 127.0.0.1.
            found.add(".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return found


def worker_listening_on(database_url: str, port: int, **extra: str) -> set[str]:
    env = payorch_env(database_url, PAYORCH_WORKER_METRICS_PORT=str(port), **extra)
    worker = subprocess.Popen(
        [sys.executable, "-m", "payorch", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while not listening_addresses(port):
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker's metrics port never opened"
            time.sleep(0.1)
        assert httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).status_code == 200
        return listening_addresses(port)
    finally:
        stop_process(worker)


def test_the_setting_is_loopback_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAYORCH_METRICS_HOST", raising=False)
    assert Settings(secret_key="x" * 32).metrics_host == "127.0.0.1"


def test_the_worker_metrics_port_binds_loopback_by_default(database_url: str) -> None:
    assert worker_listening_on(database_url, free_port()) == {"127.0.0.1"}


def test_the_worker_metrics_port_binds_the_configured_host(database_url: str) -> None:
    port = free_port()
    assert worker_listening_on(database_url, port, PAYORCH_METRICS_HOST="0.0.0.0") == {"0.0.0.0"}
