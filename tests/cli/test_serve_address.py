"""Where `payorch serve` sends people, as a real process: without PAYORCH_PUBLIC_URL the URLs it
prints and hands out (the first start's curl, the dashboard, a checkout, the simulator page, the
return to the service) follow --port, so a buyer never lands on another service on 8000; a port
already taken is one line and exit status 2, before anything is printed or created."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

import httpx
import pytest

from payorch.serve_address import local_url
from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.live import START_SECONDS, free_port, payorch_env, stop_process
from tests.providers.browser import Browser

pytestmark = pytest.mark.slow

A = "provider_a_redirect_post"


def test_the_local_url_of_a_listening_address() -> None:
    assert local_url("127.0.0.1", 8601) == "http://127.0.0.1:8601"
    assert local_url("0.0.0.0", 8601) == "http://127.0.0.1:8601"  # noqa: S104 - every interface
    assert local_url("::", 8601) == "http://[::1]:8601"
    assert local_url("::1", 8601) == "http://[::1]:8601"
    assert local_url("localhost", 8601) == "http://localhost:8601"


async def test_a_checkout_s_urls_follow_the_port_serve_listens_on(tmp_path: Path) -> None:
    env = payorch_env(f"sqlite:///{tmp_path}/p.db")  # no PAYORCH_PUBLIC_URL: payorch_env drops it
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "payorch", "serve", "--port", str(port), "--no-worker"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            printed = _started(process, base, output)
            assert f"curl -s {base}/v1/payment-intents" in printed, printed
            assert f"payorch: dashboard at {base}/dashboard" in printed, printed
            assert ":8000" not in printed, printed
            api_key = printed.split("API key:", 1)[1].split()[0]
            merchant = printed.split("merchant_account_id:", 1)[1].split()[0]
            headers = {"Authorization": f"Bearer {api_key}"}
            async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
                intent = await client.post(
                    "/v1/payment-intents",
                    json={
                        "merchant_account_id": merchant,
                        "external_reference": "port-1",
                        "amount": 1000,
                        "currency": "CLP",
                        "return_url": "https://shop.example/r",
                    },
                )
                assert intent.status_code == 201, intent.text
                intent_id = intent.json()["id"]
                started = await client.post(f"/v1/payment-intents/{intent_id}/checkout", json={"provider": A})
                assert started.status_code == 200, started.text
                action = started.json()["checkout"]
                assert action["url"].startswith(f"{base}/simulator/"), action
                # The buyer's trip stays on this service (a page on another port would end it).
                browser = Browser(client, origin=base)
                trip = await browser.open(action["url"], action["method"], action["fields"] or None)
                assert trip.page is not None and trip.page.response.status_code == 200, trip
                paid = await browser.press(trip.page, "outcome", "approve")
                assert paid.left_to is not None and paid.left_to.startswith("https://shop.example/r"), paid
                assert all(url.startswith(base) for url in paid.visited), paid.visited
                read = await client.get(f"/v1/payment-intents/{intent_id}")
                assert read.json()["status"] == "AUTHORIZED", read.text
        finally:
            stop_process(process)


def test_a_port_in_use_is_one_line_and_status_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = cli(
            ["serve", "--port", str(port), "--no-worker"], payorch_env(f"sqlite:///{tmp_path}/t.db")
        )
    refused(done, f"cannot listen on 127.0.0.1:{port}", "--port", status=2)
    assert not (tmp_path / "t.db").exists()  # stopped before the database was created


def _started(process: subprocess.Popen[str], base: str, output: IO[str]) -> str:
    """What the server printed once it answers and has printed its dashboard line."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        output.seek(0)
        printed = output.read()
        if process.poll() is not None:
            raise AssertionError(f"server exited early:\n{printed}")
        if "dashboard at" in printed:
            try:
                httpx.get(base + "/healthz", timeout=1)
                return printed
            except httpx.TransportError:
                pass
        time.sleep(0.1)
    raise AssertionError("server did not start in 60 s")
