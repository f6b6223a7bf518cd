"""The example shop (examples/shop) end to end: a live payorch (API + worker, so webhooks are
delivered) and the shop as a second live process; headless Debian Chromium buys with each
provider through the shop's pages and the simulator, and comes back to the shop's return page.

The shop listens on a random 127.x.y.z address, port 8080 (a port SANDBOX webhook URLs accept),
so parallel runs never collide. Runs on SQLite and PostgreSQL (the `database_url` fixture).
Screenshots go to PAYORCH_E2E_SCREENSHOTS (or a temporary directory).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from payorch.client import AsyncPayorchClient, Call
from payorch.client.webhooks import compute_signature
from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.registry import PROVIDER_IDS, REGISTRATIONS
from tests import browser as web
from tests.live import START_SECONDS, free_port, payorch_env, run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.both_databases, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SHOP_PORT = 8080
# What ``auto`` picks for the shop's CLP: the first in priority of the MOCK connectors the CLI
# made (one per registered provider) that takes CLP.
AUTO_PICK = min((r for r in REGISTRATIONS if "CLP" in r.supported_currencies), key=lambda r: r.mock_priority)


@dataclass
class Shop:
    url: str
    payorch_url: str
    api_key: str
    endpoint_id: str
    webhook_secret: str
    logs: Path


def wait_until_up(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited early:\n{log.read_text()[-3000:]}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not start in 60 s") from None
            time.sleep(0.1)


def start(args: list[str], env: dict[str, str], url: str, log: Path) -> subprocess.Popen[bytes]:
    # Output goes to a file, not a pipe: nobody reads it while the test runs, and a full pipe
    # would block the process.
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, *args], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until_up(process, url, log)
    except BaseException:
        stop(process)
        raise
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def loopback_host(port: int) -> str:
    """A random 127.x.y.z on which `port` is free now (the shop binds it a moment later)."""
    for _ in range(50):
        host = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"
        with socket.socket() as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        return host
    raise RuntimeError("no free loopback address")


@pytest.fixture(scope="module")
def shop(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    web.need_chromium()
    logs = tmp_path_factory.mktemp("shop")
    port = free_port()
    payorch_url = f"http://127.0.0.1:{port}"
    env = payorch_env(database_url, PAYORCH_PUBLIC_URL=payorch_url)
    # `serve` without --no-worker: the worker runs beside the API and delivers the webhooks.
    payorch = start(
        ["-m", "payorch", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env,
        payorch_url + "/healthz",
        logs / "payorch.log",
    )
    try:
        created = run_cli(
            [
                "applications",
                "create",
                "--name",
                "shop",
                "--environment",
                "SANDBOX",
                "--mock-connectors",
                "--json",
            ],
            env,
        )
        assert created.returncode == 0, created.stderr
        sandbox = json.loads(created.stdout)
        host = loopback_host(SHOP_PORT)
        shop_url = f"http://{host}:{SHOP_PORT}"
        shop_env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYORCH_", "SHOP_"))}
        shop_env.update(
            PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            PAYORCH_URL=payorch_url,
            PAYORCH_API_KEY=sandbox["api_key"],
            PAYORCH_MERCHANT_ID=sandbox["merchant_account_id"],
            SHOP_PUBLIC_URL=shop_url,
            SHOP_DATABASE=str(logs / "shop.db"),
        )
        # The README's step: the shop's own command creates the endpoint through the client.
        registered = subprocess.run(
            [sys.executable, "-m", "examples.shop", "register-webhook"],
            env=shop_env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert registered.returncode == 0, registered.stderr
        secret = registered.stdout.strip().removeprefix("export SHOP_WEBHOOK_SECRET=")
        assert len(secret) == 64, "the secret is printed once, as an export line"
        line = next(x for x in registered.stderr.splitlines() if x.startswith("# webhook endpoint "))
        endpoint_id = line.split()[3]
        shop_env["SHOP_WEBHOOK_SECRET"] = secret
        process = start(
            ["-m", "examples.shop", "serve", "--host", host, "--port", str(SHOP_PORT)],
            shop_env,
            shop_url + "/",
            logs / "shop.log",
        )
        try:
            yield Shop(shop_url, payorch_url, sandbox["api_key"], endpoint_id, secret, logs)
        finally:
            stop(process)
    finally:
        stop(payorch)


async def shop_order(shop: Shop, order_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{shop.url}/orders/{order_id}.json")
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def wait_for_event(shop: Shop, order_id: str, type_: str, timeout: float = 45) -> dict[str, Any]:
    """The shop's record of a webhook event of `type_` for the order (delivery is asynchronous)."""
    deadline = time.monotonic() + timeout
    while True:
        data = await shop_order(shop, order_id)
        found = [e for e in data["webhook_events"] if e["type"] == type_]
        if found:
            return found[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"no {type_} notice reached the shop: {data}\n{log_tails(shop)}")
        await asyncio.sleep(0.2)


def log_tails(shop: Shop) -> str:
    return "\n".join(
        f"--- {name} (tail)\n{(shop.logs / name).read_text(errors='replace')[-2500:]}"
        for name in ("shop.log", "payorch.log")
    )


async def buy(shop: Shop, provider: str, outcome: str, shots: Path) -> str:
    """Product page -> pay -> simulator (click `outcome`) -> the shop's return page; the order id."""
    expected = "PAID" if outcome == "approve" else "FAILED"
    async with web.chromium() as browser:
        page = await browser.new_page()
        try:
            await page.goto(shop.url + "/")
            await page.check(f'#buy-mug input[name="provider"][value="{provider}"]')
            await page.screenshot(path=str(shots / "shop-products.png"), full_page=True)
            await page.click("#buy-mug button[type=submit]")
            button = f'button[name="outcome"][value="{outcome}"]'
            await page.wait_for_selector(button)
            assert page.url.startswith(shop.payorch_url + "/"), page.url
            content = await page.content()
            assert "12.990" in content or "12,990" in content
            await page.screenshot(path=str(shots / f"shop-{provider}-checkout.png"), full_page=True)
            await page.click(button)
            await page.wait_for_url(f"{shop.url}/orders/*/return**", timeout=30_000)
            # Normally final at once (payorch confirms before redirecting); on a loaded machine the
            # confirmation may be left to reconciliation: the pending page refreshes itself, and a
            # locator wait survives those reloads.
            await page.locator("#order-status", has_text=expected).wait_for(timeout=60_000)
            await page.screenshot(path=str(shots / f"shop-{provider}-{outcome}-return.png"), full_page=True)
            return page.url.split("/orders/")[1].split("/")[0]
        except Exception as exc:
            await page.screenshot(path=str(shots / f"shop-{provider}-{outcome}-failure.png"), full_page=True)
            raise AssertionError(f"{exc!r}\nat {page.url}\n{log_tails(shop)}") from exc


@pytest.mark.parametrize("provider", [*PROVIDER_IDS, "auto"])
async def test_buy_with_each_provider(shop: Shop, provider: str, shots: Path) -> None:
    order_id = await buy(shop, provider, "approve", shots)
    order = (await shop_order(shop, order_id))["order"]
    assert order["status"] == "PAID" and order["amount"] == 12990 and order["provider"] == provider
    intent_id = order["payment_intent_id"]

    # The worker delivered payment.authorized; the shop verified it and answered 200.
    received = await wait_for_event(shop, order_id, "payment.authorized")
    # Normally once; a delivery retried by payorch (the shop answered after its 5 s timeout on
    # a loaded machine) is legitimately counted again: at least once.
    assert received["payment_intent_id"] == intent_id and received["times_received"] >= 1
    async with AsyncPayorchClient(shop.api_key, shop.payorch_url) as client:
        intent = await client.get_payment_intent(intent_id)
        assert intent.status == "AUTHORIZED"
        assert intent.provider == (provider if provider != "auto" else AUTO_PICK.provider_id)
        assert intent.payment is not None and intent.payment.authorization_code
        assert intent.external_reference == order_id and intent.metadata == {"order_id": order_id}
        deliveries = [
            d
            async for d in client.iter_webhook_deliveries(shop.endpoint_id)
            if d.event_id == received["event_id"]
        ]
        assert [(d.status, d.response_status) for d in deliveries] == [("SUCCEEDED", 200)]
        listed = await client.request(
            Call("GET", "/v1/events", params={"type": "payment.authorized", "payment_intent_id": intent_id})
        )
    body = json.dumps(listed["items"][0]).encode()
    assert json.loads(body)["id"] == received["event_id"]

    # A redelivery of the same event (same id, freshly signed) is acknowledged, not applied again.
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "X-Pay-Event-Id": received["event_id"],
        "X-Pay-Timestamp": timestamp,
        "X-Pay-Signature": compute_signature(body, timestamp, shop.webhook_secret),
    }
    hook = f"{shop.url}/webhooks/payorch"
    async with httpx.AsyncClient() as http:
        again = await http.post(hook, content=body, headers=headers)
        assert (again.status_code, again.text) == (200, "duplicate")
        # A tampered body, or a signature made with another secret: refused, nothing recorded.
        tampered = await http.post(hook, content=body.replace(b"12990", b"1"), headers=headers)
        assert tampered.status_code == 400
        forged = {**headers, "X-Pay-Signature": compute_signature(body, timestamp, "0" * 64)}
        assert (await http.post(hook, content=body, headers=forged)).status_code == 400
    events = (await shop_order(shop, order_id))["webhook_events"]
    authorized = [e for e in events if e["type"] == "payment.authorized"]
    assert len(authorized) == 1 and authorized[0]["times_received"] == received["times_received"] + 1


async def test_a_rejected_payment_shows_failed(shop: Shop, shots: Path) -> None:
    order_id = await buy(shop, PROVIDER_B, "reject", shots)
    assert (await shop_order(shop, order_id))["order"]["status"] == "FAILED"
    await wait_for_event(shop, order_id, "payment.failed")


async def test_the_return_page_ignores_query_parameters(shop: Shop) -> None:
    """Typing ?status=AUTHORIZED onto an unpaid order's return URL does not make it paid."""
    async with httpx.AsyncClient() as http:
        started = await http.post(f"{shop.url}/orders", data={"product_id": "coffee", "provider": PROVIDER_B})
        assert started.status_code == 303 and started.headers["location"].startswith(shop.payorch_url)
        async with AsyncPayorchClient(shop.api_key, shop.payorch_url) as client:
            newest = (await client.list_events(type="payment.checkout.started", limit=1)).items[0]
            intent = await client.get_payment_intent(str(newest.payment_intent_id))
        order_id = str(intent.external_reference)
        assert intent.status == "REQUIRES_ACTION" and intent.amount == 8990
        forged = await http.get(
            f"{shop.url}/orders/{order_id}/return",
            params={"payment_intent_id": intent.id, "status": "AUTHORIZED"},
        )
    assert forged.status_code == 200
    assert 'id="order-status">PENDING<' in forged.text and "payment is pending" in forged.text
    assert (await shop_order(shop, order_id))["order"]["status"] == "PENDING"


async def test_a_failed_start_can_be_retried_for_the_same_order(shop: Shop) -> None:
    """The provider is down: the buyer sees an error page with "Try again"; once it is back, the
    retry reuses the order's idempotency keys (one intent, one checkout) and sends the buyer on."""
    provider = PROVIDER_A
    async with AsyncPayorchClient(shop.api_key, shop.payorch_url) as client, httpx.AsyncClient() as http:
        await client.simulator_set_fault(provider, "error")
        try:
            failed = await http.post(
                f"{shop.url}/orders", data={"product_id": "coffee", "provider": provider}
            )
        finally:
            await client.simulator_set_fault(provider, "ok")
        assert failed.status_code in (502, 503), failed.text
        assert "could not be started" in failed.text and "Try again" in failed.text
        order_id = failed.text.split('action="/orders/')[1].split("/pay")[0]
        before = (await shop_order(shop, order_id))["order"]
        assert before["status"] == "PENDING" and before["payment_intent_id"]

        retried = await http.post(f"{shop.url}/orders/{order_id}/pay")
        assert retried.status_code == 200, retried.text
        assert (
            'id="checkout" method="post"' in retried.text and 'type="hidden" name="token_ws"' in retried.text
        )
        intent = await client.get_payment_intent(before["payment_intent_id"])
        assert intent.status == "REQUIRES_ACTION" and intent.external_reference == order_id
        started = await client.list_events(type="payment.checkout.started", payment_intent_id=intent.id)
        assert len(started.items) == 1
    assert (await shop_order(shop, order_id))["order"]["payment_intent_id"] == intent.id
