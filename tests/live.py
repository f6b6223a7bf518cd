"""Run `payorch` as a real process: the one live server of the tests (command line, restarts,
the sync client, the OpenAPI fuzz, the browser), plus helpers to watch processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import IO

import httpx

from tests.cli_in_process import cli
from tests.kit import TEST_SECRET_KEY, Sandbox

SRC = str(Path(__file__).resolve().parent.parent / "src")
# How long a process started by a test may take to answer. A start takes 2-5 s on an idle machine;
# at load 20 on 2 cores (the whole suite with other work beside it) 60 s was seen to run out. It
# bounds a wait on readiness, so a start that answers sooner returns sooner.
START_SECONDS = 180.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def payorch_env(database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYORCH_")}
    env.update(
        PAYORCH_DATABASE_URL=database_url,
        PAYORCH_SECRET_KEY=TEST_SECRET_KEY,
        PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE="true",  # receivers listen on loopback
        PYTHONPATH=SRC + os.pathsep + env.get("PYTHONPATH", ""),
    )
    env.update(extra)
    return env


def run_cli(args: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "payorch", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def migrated(env: dict[str, str]) -> dict[str, str]:
    """``env`` after `payorch migrate`: only it and `serve` make a SQLite file that is not there
    yet, so a test's fresh file is migrated before `applications create` and the rest. In process
    (tests/cli_in_process.py): the server the test starts next is the real program."""
    done = cli(["migrate"], env)
    assert done.returncode == 0, done.stderr
    return env


def stop_process(process: subprocess.Popen[str], signum: int = signal.SIGTERM, timeout: float = 30) -> None:
    """Ask `process` to stop with `signum`; kill it if it has not stopped within `timeout`."""
    process.send_signal(signum)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def live_server(
    env: dict[str, str],
    *extra_args: str,
    port: int | None = None,
    output: IO[str] | None = None,
    host: str = "127.0.0.1",
    start_seconds: float = START_SECONDS,
) -> Iterator[str]:
    """Start `payorch serve` (with `extra_args`, e.g. "--no-worker") and yield its base URL once
    it answers; SIGTERM it at the end. Its output goes to a file (a pipe nobody reads would stall
    a busy server), ``output`` when given (the test reads it), and is shown if it exits early.
    ``host`` names the loopback address in the URL ("localhost": a WebAuthn relying party may
    not be an IP address). ``start_seconds``: how long it may take to answer."""
    port = port or free_port()
    base = f"http://{host}:{port}"
    env = {**env, "PAYORCH_PUBLIC_URL": base}
    with nullcontext(output) if output is not None else tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "payorch", "serve", "--port", str(port), *extra_args],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            deadline = time.monotonic() + start_seconds
            while True:
                if process.poll() is not None:
                    output.seek(0)
                    raise RuntimeError(f"server exited early:\n{output.read()}")
                try:
                    httpx.get(base + "/v1/payment-intents/payi_x", timeout=1)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"server did not start in {start_seconds:g} s") from None
                    time.sleep(0.1)
            yield base
        finally:
            stop_process(process)


def create_sandbox(env: dict[str, str]) -> dict[str, str]:
    """`payorch applications create --mock-connectors`: a sandbox application with MOCK
    connectors, as JSON (api_key, merchant_account_id, ...). In process, as ``migrated``."""
    done = cli(
        [
            "applications",
            "create",
            "--name",
            "live",
            "--environment",
            "SANDBOX",
            "--mock-connectors",
            "--json",
        ],
        env,
    )
    assert done.returncode == 0, done.stderr
    data: dict[str, str] = json.loads(done.stdout)
    return data


def as_sandbox(created: dict[str, str]) -> Sandbox:
    """The JSON of `payorch applications create --json` as the kit's ``Sandbox`` (for
    ``kit.intent_body`` and its ``headers``)."""
    return Sandbox(created["application_id"], created["merchant_account_id"], created["api_key"])


def children_of(pid: int, timeout: float = START_SECONDS) -> list[int]:
    """The child processes of ``pid``, waiting (bounded) until there is at least one."""
    deadline = time.monotonic() + timeout
    while True:
        listing = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
        children = [int(child) for child in listing.stdout.split()]
        if children or time.monotonic() > deadline:
            return children
        time.sleep(0.1)


def is_running(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (exited, not yet reaped by its new parent) has ended."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_until_ended(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while is_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def wait_until_answering(base: str, timeout: float = START_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            httpx.get(base + "/healthz", timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{base} did not answer in {timeout:g} s") from None
            time.sleep(0.1)
