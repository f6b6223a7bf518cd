"""The worker that `payorch serve` starts ends with serve, even when serve is killed (SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.live import children_of, free_port, payorch_env, wait_until_answering, wait_until_ended

pytestmark = pytest.mark.slow


def test_sigkill_of_serve_also_ends_its_worker(database_url: str) -> None:
    port = free_port()
    env = payorch_env(database_url, PAYORCH_PUBLIC_URL=f"http://127.0.0.1:{port}")
    serve = subprocess.Popen(
        [sys.executable, "-m", "payorch", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    try:
        workers = children_of(serve.pid)
        assert workers, "serve started no worker"
        wait_until_answering(f"http://127.0.0.1:{port}")
        serve.kill()  # SIGKILL: serve cannot stop its worker itself
        serve.wait(timeout=10)
        for worker in workers:
            assert wait_until_ended(worker, timeout=20), f"worker {worker} outlived serve"
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
        for worker in workers:  # never leave one behind, even when the test fails
            try:
                os.kill(worker, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_worker_whose_parent_is_already_gone_stops_cleanly(database_url: str) -> None:
    """The portable check (no prctl involved): the named parent is not ours, as after a
    parent's death, so the worker stops at once and cleanly."""
    not_our_parent = os.getpid()  # the worker's parent is the shell below, not this process
    process = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -m payorch worker --parent-pid {not_our_parent}; exit $?'],
        env=payorch_env(database_url),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = process.stdout + process.stderr
    assert process.returncode == 0, output
    assert "is gone; stopping" in output and "worker stopped" in output, output
    assert "Traceback" not in output
