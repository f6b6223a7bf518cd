"""Webhook tools in Debian's Chromium against a live `payorch serve` (its worker delivers), on
SQLite and PostgreSQL: send a test event from an endpoint's page (it arrives, marked as a test);
a delivery's page shows why it failed, the payload sent and a link to its payment intent; rotate
the secret from the page (notices verify with both secrets during the overlap) and, once an
overlap has ended, only with the new one. Screenshots at 1280 and 390 px (build/screenshots/ or
PAYORCH_E2E_SCREENSHOTS); no page is wider than the screen."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from payorch.client.errors import WebhookVerificationError
from payorch.client.webhooks import verify
from tests import browser as web
from tests.kit import create_intent
from tests.live import as_sandbox, create_sandbox
from tests.webhooks.receiver import Received, Receiver, loopback_socket, serve_receiver

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url) as found:  # with its worker: webhooks are delivered
        yield found


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as found:
        yield found


async def _next_notice(receiver: Receiver, seen: int, event_type: str) -> Received:
    """The first notice of ``event_type`` after the first ``seen`` requests."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for request in receiver.requests[seen:]:
            if json.loads(request.body)["type"] == event_type:
                return request
        await asyncio.sleep(0.1)
    raise AssertionError(f"no {event_type} notice arrived")


async def _reload_until(page: Page, text: str) -> str:
    deadline = time.monotonic() + 30
    while text not in (content := await page.content()):
        assert time.monotonic() < deadline, f"{text!r} never shown"
        await asyncio.sleep(0.2)
        await page.reload()
    return content


def _verifies(notice: Received, secret: str) -> bool:
    try:
        verify(notice.body, notice.headers, secret)
    except WebhookVerificationError:
        return False
    return True


async def test_webhook_tools_in_a_browser(server: web.Server, database_url: str, receiver: Receiver) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))
    free = loopback_socket()
    refused_host = free.getsockname()[0]
    free.close()  # nothing listens there: its deliveries are refused

    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api, web.chromium() as browser:
        hooks = "/v1/admin/webhook-endpoints"
        made = await api.post(hooks, json={"url": receiver.url("/hook")})
        endpoint_id, old = made.json()["data"]["id"], made.json()["data"]["secret"]
        made = await api.post(hooks, json={"url": f"http://{refused_host}:8080/down"})
        down_id = made.json()["data"]["id"]
        page = await web.page_at(browser)
        await web.sign_in(page, url, app["api_key"])

        # A test event from the endpoint's page: delivered, marked as a test.
        await page.goto(f"{url}/dashboard/webhooks/{endpoint_id}")
        seen = len(receiver.requests)
        await web.submit(page, "Send a test event")
        assert "Test event queued" in await page.content()
        notice = await _next_notice(receiver, seen, "webhook.test")
        assert verify(notice.body, notice.headers, old).test is True
        content = await _reload_until(page, "status-SUCCEEDED")  # once the result is recorded
        assert '"test": true' in content
        await web.screenshot(page, shots, "delivery-test", check=web.fits_the_width)

        # A failing delivery of a payment: why it failed, the payload, a link to the payment.
        intent_id = (await create_intent(api, as_sandbox(app), external_reference="tools-1"))["id"]
        deadline = time.monotonic() + 30
        while not (items := (await api.get(f"{hooks}/{down_id}/deliveries")).json()["items"])[0]["attempts"]:
            assert time.monotonic() < deadline, items
            await asyncio.sleep(0.2)
        await page.goto(f"{url}/dashboard/webhooks/deliveries/{down_id}/{items[0]['id']}")
        content = await page.content()
        assert "connection_refused" in content and intent_id in content
        assert f'"payment_intent_id": "{intent_id}"' in content
        await web.screenshot(page, shots, "delivery-failed", check=web.fits_the_width)
        await web.follow(page, page.get_by_role("link", name=intent_id))
        assert page.url.endswith(f"/dashboard/payments/{intent_id}")
        await page.goto(f"{url}/dashboard/webhooks/deliveries?endpoint_id={down_id}")
        assert "connection refused" in await page.content()

        # Rotate with a one-hour overlap: the new secret shown once; notices verify with both.
        await page.goto(f"{url}/dashboard/webhooks/{endpoint_id}")
        await page.get_by_label("The old secret keeps signing for").select_option("3600")
        await web.submit(page, "Rotate the secret")
        new = await page.locator("#secret").inner_text()
        assert re.fullmatch(r"[0-9a-f]{64}", new) and new != old
        assert "also signed with the previous secret" in await page.content()
        await web.screenshot(page, shots, "webhook-rotated", check=web.fits_the_width)
        seen = len(receiver.requests)
        await create_intent(api, as_sandbox(app), external_reference="tools-2")
        during = await _next_notice(receiver, seen, "payment_intent.created")
        assert _verifies(during, old) and _verifies(during, new)
        await page.goto(f"{url}/dashboard/webhooks/{endpoint_id}")
        assert "still signs beside the current one until" in await page.content()
        await web.screenshot(page, shots, "webhook-endpoint-overlap", check=web.fits_the_width)

        # Once an overlap ends only the newest secret signs (a 1 s overlap, through the API).
        rolled = await api.post(f"{hooks}/{endpoint_id}/secret/rotate", json={"overlap_seconds": 1})
        newest = rolled.json()["data"]["secret"]
        await asyncio.sleep(1.5)
        await page.reload()
        seen = len(receiver.requests)
        await web.submit(page, "Send a test event")
        after = await _next_notice(receiver, seen, "webhook.test")
        assert _verifies(after, newest)
        assert not _verifies(after, new) and not _verifies(after, old)
