"""A live payorch server (uvicorn on 127.0.0.1) for browser tests and the benchmark."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

SRC = str(Path(__file__).resolve().parents[2] / "src")
SECRET_KEY = "e2e-secret-key-0123456789abcdef0123456789"  # noqa: S105 - test-only key


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    url: str
    env: dict[str, str]

    def create_sandbox(self) -> dict[str, str]:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "payorch",
                "applications",
                "create",
                "--name",
                "e2e",
                "--environment",
                "SANDBOX",
                "--mock-connectors",
                "--json",
            ],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        data: dict[str, str] = json.loads(done.stdout)
        return data


@contextmanager
def live_server(
    database_url: str, *, workers: int = 1, extra_env: dict[str, str] | None = None
) -> Iterator[LiveServer]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_PUBLIC_URL": url,
        "PAYORCH_SECRET_KEY": SECRET_KEY,
        **(extra_env or {}),
    }
    process = subprocess.Popen(  # noqa: S603 - our own server, fixed arguments
        [
            sys.executable,
            "-m",
            "payorch",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--no-worker",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"the server stopped: {process.stderr.read() if process.stderr else ''}"
                )
            try:
                if httpx.get(url + "/openapi.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start within 60 s")
            time.sleep(0.2)
        yield LiveServer(url, env)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
