"""`uvicorn --workers 2` with PROMETHEUS_MULTIPROC_DIR: /metrics, answered by either process,
counts the requests of both (docs/deployment.md, "Metrics with several processes")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from payorch.db.migrate import upgrade_in_thread
from tests.kit import TEST_SECRET_KEY
from tests.live import START_SECONDS, free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REQUESTS = 40


@pytest.mark.slow
def test_two_processes_report_one_sum(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'mp.db'}"
    upgrade_in_thread(database_url)
    multiproc = tmp_path / "prometheus"
    multiproc.mkdir()
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_SECRET_KEY": TEST_SECRET_KEY,
        "PAYORCH_PUBLIC_URL": f"http://127.0.0.1:{port}",
    }
    server = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
        [
            sys.executable,
            "-m",
            "uvicorn",
            "payorch.composition:serve_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "2",
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "uvicorn --workers 2 did not start"
            time.sleep(0.2)
        # Wait until both processes have started (each creates its value files at import).
        while len({p.stem.rsplit("_", 1)[1] for p in multiproc.glob("*.db")}) < 2:
            assert time.monotonic() < deadline, "the second process did not start"
            time.sleep(0.2)
        for _ in range(REQUESTS):  # a new connection each time: the kernel spreads them
            assert httpx.get(f"{base}/readyz", timeout=5).status_code == 200
        text = httpx.get(f"{base}/metrics", timeout=5).text
    finally:
        server.terminate()
        server.wait(timeout=30)
    match = re.search(
        r'^payorch_http_requests_total\{method="GET",route="/readyz",status="200"\} (\S+)$',
        text,
        re.MULTILINE,
    )
    assert match, text[:2000]
    assert float(match.group(1)) == REQUESTS
