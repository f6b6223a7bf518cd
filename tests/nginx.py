"""Helpers shared by the tests of this directory."""

from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.live import free_port, stop_process
from tests.needs import missing


def _nginx() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if found is None:
        missing("Debian's nginx is not installed (apt-get install nginx)")
    return found


def render(upstream: str | Sequence[str], listen: str) -> str:
    """The shipped template with ``upstream`` (host:port of one replica, or a list of them) as its
    servers, rendered as its header comment shows (``server host:port;`` each, on one line: envsubst
    also fills the placeholder in that comment)."""
    replicas = [upstream] if isinstance(upstream, str) else list(upstream)
    servers = "".join(f"server {replica}; " for replica in replicas)
    text = TEMPLATE.read_text()
    text = text.replace("${PAYORCH_UPSTREAM_SERVERS}", servers).replace("${PAYORCH_LISTEN}", listen)
    text = _shortened(text, "client_header_timeout", f"{HEADER_TIMEOUT}s")
    text = _shortened(text, "client_body_timeout", "5s")
    return _shortened(text, "limit_conn payorch_per_address", "1")


@contextmanager
def nginx_serving(prefix: Path, config: str) -> Iterator[str]:
    """nginx in the foreground with ``config`` (a rendered payorch.conf) under ``prefix``; its base URL."""
    nginx = _nginx()
    port = free_port()
    (prefix / "payorch.conf").write_text(config.replace("${PAYORCH_LISTEN}", f"127.0.0.1:{port}"))
    temp = " ".join(
        f"{name}_temp_path {prefix}/{name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # One foreground process: no daemon, no workers switching to another user.
    (prefix / "nginx.conf").write_text(
        f"daemon off; master_process off; pid {prefix}/nginx.pid; error_log {prefix}/error.log;\n"
        f"events {{}}\nhttp {{ access_log off; {temp} include {prefix}/payorch.conf; }}\n"
    )
    process = subprocess.Popen(
        [nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", str(prefix / "error.log")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            if process.poll() is not None:
                out = process.stdout.read() if process.stdout else ""
                raise RuntimeError(f"nginx exited: {out}{(prefix / 'error.log').read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nginx did not listen in 15 s"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process, signal.SIGQUIT, 10)  # SIGQUIT: graceful


TEMPLATE = Path(__file__).resolve().parent.parent / "deploy" / "nginx" / "payorch.conf"


HEADER_TIMEOUT = 1


def _shortened(text: str, directive: str, value: str) -> str:
    text, count = re.subn(rf"(?m)^(\s*){directive} \S+;", rf"\g<1>{directive} {value};", text)
    assert count == 1, f"{directive} not found once in {TEMPLATE}"
    return text
