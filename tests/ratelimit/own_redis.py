"""A redis-server of the test's own on a free port, which the test may pause for a while (CLIENT
PAUSE: it accepts connections and commands but answers nothing), stop (killed: connections are
refused) and start again on the same port. Pausing the machine's shared Redis would stall other tests."""

from __future__ import annotations

import socket
import subprocess
import time

import redis


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class OwnRedis:
    def __init__(self, executable: str) -> None:
        self._executable = executable
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None
        self._paused_until = 0.0

    def start(self) -> None:
        self._process = subprocess.Popen(
            [self._executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--daemonize", "no"],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with redis.Redis(port=self.port, socket_timeout=1) as probe:
                    probe.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def pause(self, seconds: float) -> None:
        """Every client's commands wait ``seconds`` unanswered (the server stays up). Redis
        postpones every command meanwhile, CLIENT UNPAUSE from a new connection too: a pause ends
        when its time is up."""
        with redis.Redis(port=self.port, socket_timeout=1) as control:
            control.execute_command("CLIENT", "PAUSE", int(seconds * 1000), "ALL")
        self._paused_until = time.monotonic() + seconds

    def pause_left(self) -> float:
        return max(0.0, self._paused_until - time.monotonic())

    def stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
            self._process = None
