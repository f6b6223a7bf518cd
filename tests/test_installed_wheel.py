"""The installed package is the tested package. Every other test runs on the editable install
(the checkout's src/ on sys.path), which reads files the wheel may not carry. Here the wheel is
built from a copy of the checkout, installed into a fresh virtual environment outside it, and
driven as an operator would: migrate, applications create, serve (a payment intent, the
dashboard's sign-in page and its script, /docs, a simulator page) and worker (a delivery).

Dependencies come from the project's environment through a .pth file in the new one: a plain
path line, so the project's own .pth files (the editable install of payorch) are not run and
only the wheel's payorch can be imported. Building the wheel uses pip's configured index for
the build backend (setuptools), as `pip install .` does."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from tests.kit import intent_body
from tests.live import as_sandbox, free_port, stop_process
from tests.webhooks.receiver import loopback_socket
from tests.wheels import build_wheel, clean_env, install_beside_project_dependencies, new_venv, run

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    venv: Path
    wheel: Path
    work: Path  # the commands' working directory: outside the checkout

    def command(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def package_dir(self) -> Path:
        found = subprocess.run(
            [self.command("python"), "-c", "import payorch; print(payorch.__file__)"],
            cwd=self.work,
            env=clean_env(),
            capture_output=True,
            text=True,
            check=True,
        )
        return Path(found.stdout.strip()).parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("installed")
    wheel = build_wheel(work)
    venv = work / "venv"
    install_beside_project_dependencies(new_venv(venv), wheel, work)
    return Installed(venv=venv, wheel=wheel, work=work)


def test_the_wheel_carries_every_file_of_the_package(installed: Installed) -> None:
    """Every file of the copy it was built from (the checkout may have changed since), but the
    client's: payorch-client ships those (tests/test_client_package.py)."""
    package = installed.work / "source" / "src" / "payorch"
    in_source = {path.relative_to(package.parent).as_posix() for path in package.rglob("*") if path.is_file()}
    with zipfile.ZipFile(installed.wheel) as wheel:
        shipped = {name for name in wheel.namelist() if name.startswith("payorch/")}
    client = {name for name in in_source if name.startswith("payorch/client/")}
    assert client and shipped & client == set()
    assert in_source - client - shipped == set()


def test_the_installed_package_is_the_wheels_copy(installed: Installed) -> None:
    assert installed.package_dir().is_relative_to(installed.venv), installed.package_dir()


class _Hooks(BaseHTTPRequestHandler):
    received: list[bytes]

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.received.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[bytes]]]:
    """A webhook receiver on a loopback address, port 8080 (a SANDBOX port)."""
    received: list[bytes] = []
    handler = type("Hooks", (_Hooks,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler, bind_and_activate=False)
    server.socket.close()
    server.socket = loopback_socket()
    server.socket.setblocking(True)
    host, port = server.socket.getsockname()[:2]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{port}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def start(installed: Installed, args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[str]:
    with log.open("w") as output:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [installed.command("payorch"), *args],
            cwd=installed.work,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )


def wait_answering(base: str, process: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        assert process.poll() is None, f"serve exited {process.returncode}:\n{log.read_text()}"
        try:
            httpx.get(base + "/healthz", timeout=1)
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, f"serve did not answer in 90 s:\n{log.read_text()}"
            time.sleep(0.2)


def get_page(client: httpx.Client, url: str, kind: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith(kind), (url, response.headers["content-type"])
    return response.text


def get_linked(client: httpx.Client, page_url: str, page: str) -> list[str]:
    """Every same-origin script and stylesheet the page loads, fetched: their URLs."""
    links = re.findall(r'<(?:script|link)[^>]*?(?:src|href)="([^"]+)"', page)
    assert links, f"{page_url} loads no script or stylesheet"
    for link in links:
        response = client.get(urljoin(page_url, link))
        assert response.status_code == 200 and response.content, (link, response.status_code)
    return links


def test_migrate_create_serve_and_worker_from_the_wheel(
    installed: Installed, receiver: tuple[str, list[bytes]], tmp_path: Path
) -> None:
    hook_url, received = receiver
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = clean_env(PAYORCH_DATABASE_URL=f"sqlite:///{tmp_path}/payorch.db", PAYORCH_PUBLIC_URL=base)
    run([installed.command("payorch"), "migrate"], installed.work, env)
    created = json.loads(
        run(
            [installed.command("payorch"), "applications", "create", "--name", "Shop"]
            + ["--environment", "SANDBOX", "--mock-connectors", "--json"],
            installed.work,
            env,
        ).stdout
    )
    serve_log, worker_log = tmp_path / "serve.log", tmp_path / "worker.log"
    serve = start(installed, ["serve", "--port", str(port), "--no-worker"], env, serve_log)
    worker: subprocess.Popen[str] | None = None
    try:
        wait_answering(base, serve, serve_log)
        headers = {"Authorization": f"Bearer {created['api_key']}"}
        with httpx.Client(base_url=base, headers=headers, timeout=30) as api:
            endpoint = api.post("/v1/admin/webhook-endpoints", json={"url": hook_url})
            assert endpoint.status_code == 201, endpoint.text
            intent = api.post(
                "/v1/payment-intents",
                json=intent_body(as_sandbox(created)),
                headers={"Idempotency-Key": "wheel-intent"},
            )
            assert intent.status_code == 201, intent.text
            checkout = api.post(
                f"/v1/payment-intents/{intent.json()['id']}/checkout",
                json={"provider": "provider_b_redirect_get"},
                headers={"Idempotency-Key": "wheel-checkout"},
            )
            assert checkout.status_code == 200, checkout.text
            simulator_url = checkout.json()["checkout"]["url"]
            simulator_page = get_page(api, simulator_url, "text/html")
            assert "1.500" in simulator_page or "1,500" in simulator_page, simulator_page

            sign_in = get_page(api, f"{base}/dashboard/sign-in", "text/html")
            assert any(
                link.endswith("/dashboard.js")
                for link in get_linked(api, f"{base}/dashboard/sign-in", sign_in)
            )
            get_linked(api, f"{base}/docs", get_page(api, f"{base}/docs", "text/html"))

        worker = start(installed, ["worker"], env, worker_log)
        deadline = time.monotonic() + 90
        # The intent's two events (created, checkout started) may arrive in either order: the
        # worker delivers them concurrently.
        while "payment_intent.created" not in [json.loads(body)["type"] for body in received]:
            assert worker.poll() is None, f"worker exited {worker.returncode}:\n{worker_log.read_text()}"
            assert time.monotonic() < deadline, f"no delivery in 90 s:\n{worker_log.read_text()}"
            time.sleep(0.2)
        assert worker.poll() is None, worker_log.read_text()
    finally:
        for process in (worker, serve):
            if process is not None:
                stop_process(process)
    assert worker.returncode == 0 and serve.returncode == 0, (worker_log.read_text(), serve_log.read_text())
    assert "Traceback" not in worker_log.read_text() + serve_log.read_text()


def test_a_start_that_cannot_load_its_files_writes_nothing_first(
    installed: Installed, tmp_path: Path
) -> None:
    """A package missing a file its pages read fails before it creates the database, its key
    file, or a sandbox application whose key it would print and then lose. The worker never
    creates a database (only serve and migrate do), so it is given a migrated one: it fails on
    the missing file and adds nothing beside it."""
    script = installed.package_dir() / "dashboard" / "assets" / "dashboard.js"
    hidden = script.with_name("dashboard.js.hidden")
    database = tmp_path / "first" / "payorch.db"
    port = free_port()
    env = clean_env(
        PAYORCH_DATABASE_URL=f"sqlite:///{database}", PAYORCH_PUBLIC_URL=f"http://127.0.0.1:{port}"
    )
    existing = tmp_path / "existing" / "payorch.db"
    existing.parent.mkdir()
    worker_env = {**env, "PAYORCH_DATABASE_URL": f"sqlite:///{existing}"}

    def payorch(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [installed.command("payorch"), *args],
            cwd=installed.work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert payorch(["migrate"], worker_env).returncode == 0
    before = sorted(p.name for p in existing.parent.iterdir())
    script.rename(hidden)
    try:
        serve = payorch(["serve", "--port", str(port)], env)
        worker = payorch(["worker"], worker_env)
    finally:
        hidden.rename(script)
    assert not database.parent.exists(), list(database.parent.iterdir())  # no database, no key file
    assert sorted(p.name for p in existing.parent.iterdir()) == before
    for done in (serve, worker):
        assert done.returncode == 1 and done.stdout == "", (done.stdout, done.stderr)
        lines = done.stderr.splitlines()  # one line naming the file, no traceback, no key
        assert len(lines) == 1 and lines[0].endswith("dashboard.js; reinstall payorch"), done.stderr
