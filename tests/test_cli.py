"""The operator's command line, run as a real process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.cli_in_process import cli
from tests.kit import intent_body
from tests.live import START_SECONDS, as_sandbox, live_server, payorch_env, run_cli, wait_until_ended

pytestmark = pytest.mark.slow


def test_applications_create_prints_exactly_one_json_object(database_url: str) -> None:
    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
    result = run_cli(
        ["applications", "create", "--name", "Shop", "--environment", "SANDBOX", "--json"],
        payorch_env(database_url),
    )
    assert result.returncode == 0, result.stderr
    created = json.loads(result.stdout)
    assert set(created) == {"application_id", "merchant_account_id", "environment", "api_key"}
    assert created["application_id"].startswith("app_")
    assert created["merchant_account_id"].startswith("mrc_")
    assert created["environment"] == "SANDBOX"
    assert created["api_key"].startswith("pay_sb_")


def test_production_applications_get_live_keys(database_url: str) -> None:
    result = cli(
        ["applications", "create", "--name", "Live", "--environment", "PRODUCTION", "--json"],
        payorch_env(database_url),
    )
    assert json.loads(result.stdout)["api_key"].startswith("pay_live_")


def test_mock_connectors_are_refused_for_production(database_url: str) -> None:
    result = cli(
        ["applications", "create", "--name", "L", "--environment", "PRODUCTION", "--mock-connectors"],
        payorch_env(database_url),
    )
    assert result.returncode == 2 and "SANDBOX" in result.stderr


def test_migrate_is_repeatable(database_url: str) -> None:
    for _ in range(2):
        result = run_cli(["migrate"], payorch_env(database_url))  # the real program
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PAYORCH_RATE_LIMIT", "lots"),
        ("PAYORCH_WEBHOOK_RETRY_SCHEDULE", "1,2,3"),
        ("PAYORCH_PROVIDER_TIMEOUT_SECONDS", "-1"),
        ("PAYORCH_DATABASE_URL", "mysql://x"),
        ("PAYORCH_SECRET_KEY", "short"),
        ("PAYORCH_SIMULATOR_PUBLIC_RATE_LIMIT", "lots"),
        ("PAYORCH_SIMULATOR_PUBLIC_RETENTION_SECONDS", "0"),
        ("PAYORCH_HEADER_TIMEOUT_SECONDS", "0"),
        ("PAYORCH_BODY_TIMEOUT_SECONDS", "soon"),
        ("PAYORCH_MAX_CONNECTIONS", "0"),
        ("PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE", "maybe"),
    ],
)
def test_a_bad_setting_stops_the_start_with_one_line_naming_it(tmp_path, variable: str, value: str) -> None:
    env = payorch_env(f"sqlite:///{tmp_path}/x.db", **{variable: value})
    result = cli(["migrate"], env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and variable in lines[0], result.stderr
    assert "Value error" not in lines[0], lines[0]  # the validation library's prefix says nothing


def test_postgres_without_a_secret_key_is_refused(tmp_path) -> None:
    env = payorch_env("postgresql://postgres@127.0.0.1:5432/test")
    env.pop("PAYORCH_SECRET_KEY")
    result = cli(["migrate"], env)
    assert result.returncode == 2 and "PAYORCH_SECRET_KEY" in result.stderr


def test_embedded_database_gets_a_key_file(tmp_path) -> None:
    env = payorch_env(f"sqlite:///{tmp_path}/p.db")
    env.pop("PAYORCH_SECRET_KEY")
    assert cli(["migrate"], env).returncode == 0
    key_file = tmp_path / "p.db.key"
    assert key_file.exists() and oct(key_file.stat().st_mode & 0o777) == "0o600"


def test_a_restart_keeps_every_intent(database_url: str) -> None:
    env = payorch_env(database_url)
    created = json.loads(
        cli(["applications", "create", "--name", "R", "--environment", "SANDBOX", "--json"], env).stdout
    )
    headers = {"Authorization": f"Bearer {created['api_key']}"}
    body = intent_body(
        as_sandbox(created), external_reference="restart", amount=100, return_url="https://shop.example/r"
    )
    with live_server(env, "--no-worker") as base:
        ids = [
            httpx.post(f"{base}/v1/payment-intents", json=body, headers=headers).json()["id"]
            for _ in range(5)
        ]
    with live_server(env, "--no-worker") as base:
        for intent_id in ids:
            response = httpx.get(f"{base}/v1/payment-intents/{intent_id}", headers=headers)
            assert response.status_code == 200 and response.json()["status"] == "CREATED"


def test_serve_with_two_api_processes(database_url: str) -> None:
    env = payorch_env(database_url)
    created = json.loads(
        cli(["applications", "create", "--name", "W", "--environment", "SANDBOX", "--json"], env).stdout
    )
    headers = {"Authorization": f"Bearer {created['api_key']}"}
    with live_server(env, "--no-worker", "--workers", "2") as base:
        response = httpx.get(f"{base}/v1/payment-intents/payi_nope", headers=headers)
        assert response.status_code == 404


def test_worker_starts_and_stops_cleanly_on_sigterm(database_url: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "payorch", "worker"],
        env=payorch_env(database_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    seen = ""
    deadline = time.monotonic() + START_SECONDS
    while "worker started" not in seen and time.monotonic() < deadline:
        seen += process.stdout.readline()
    assert "worker started" in seen, seen
    time.sleep(0.5)  # let the loops enter their first batch
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0
    output = seen + process.stdout.read()
    assert "worker stopped" in output and "Traceback" not in output


def test_first_start_on_an_empty_embedded_database_prints_a_sandbox_key_once(tmp_path) -> None:
    """What `make run` does: serve on an empty SQLite database creates a sandbox application
    with MOCK connectors and prints its key and merchant once; the key works for a checkout."""
    from tests.live import free_port

    env = payorch_env(f"sqlite:///{tmp_path}/first.db")
    env.pop("PAYORCH_SECRET_KEY")  # the embedded default makes its own key file
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env["PAYORCH_PUBLIC_URL"] = base

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "payorch", "serve", "--port", str(port), "--no-worker"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def wait_until_up(process: subprocess.Popen[str]) -> str:
        assert process.stdout is not None
        seen = ""
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            try:
                httpx.get(base + "/healthz", timeout=1)
                return seen
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("server did not start")

    process = start()
    try:
        wait_until_up(process)
        assert process.stdout is not None
        lines = []
        while not any("curl" in line for line in lines):
            lines.append(process.stdout.readline())
        printed = "".join(lines)
        api_key = printed.split("API key:", 1)[1].split()[0]
        merchant = printed.split("merchant_account_id:", 1)[1].split()[0]
        assert api_key.startswith("pay_sb_") and merchant.startswith("mrc_")
        headers = {"Authorization": f"Bearer {api_key}"}
        intent = httpx.post(
            f"{base}/v1/payment-intents",
            headers=headers,
            json={
                "merchant_account_id": merchant,
                "external_reference": "first",
                "amount": 1000,
                "currency": "CLP",
                "return_url": "https://shop.example/r",
            },
        ).json()
        checkout = httpx.post(f"{base}/v1/payment-intents/{intent['id']}/checkout", headers=headers, json={})
        assert checkout.status_code == 200, checkout.text
        assert checkout.json()["provider"] == "provider_a_redirect_post"  # MOCK A has priority 1
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert (tmp_path / "first.db.key").exists()

    second = start()  # not empty any more: no key is created or printed, but it says where
    try:  # the service is, the sandbox's merchant and how to get a new key (`make run` again)
        wait_until_up(second)
    finally:
        second.send_signal(signal.SIGTERM)
        output = second.communicate(timeout=30)[0]
    assert "API key" not in output and api_key not in output
    assert f"serving at {base}" in output and merchant in output
    assert "payorch keys create --application app_" in output


def test_sigterm_to_serve_also_stops_its_worker(database_url: str) -> None:
    from tests.live import free_port

    port = free_port()
    env = {**payorch_env(database_url), "PAYORCH_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "payorch", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        children: list[str] = []
        while time.monotonic() < deadline and not children:
            listing = subprocess.run(
                ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
            )
            children = listing.stdout.split()
            time.sleep(0.2)
        assert children, "serve started no worker"
        for _ in range(300):
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=40)
    for child in children:  # waited for, bounded: the worker stops within its own grace period
        assert wait_until_ended(int(child), timeout=10), f"worker {child} outlived serve"
