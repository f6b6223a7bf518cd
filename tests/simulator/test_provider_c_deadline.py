"""Provider C's simulated page names payorch's deadline: a checkout that payorch ends after
PAYORCH_CHECKOUT_TTL_SECONDS (shorter than the 30 minutes the provider allows a session) shows
"Pay before" that time on the buyer's page, and the session ends then (the page says expired,
a press moves nothing). Through the service's API, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.providers.helpers import read, start

pytestmark = pytest.mark.settings(checkout_ttl_seconds=600)

C = "provider_c_redirect_get"


async def test_the_page_s_deadline_is_the_checkout_s(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, checkout = await start(client, sandbox, C)
    deadline = datetime.fromisoformat(checkout["expires_at"])
    assert (deadline - clock.now()).total_seconds() == pytest.approx(600, abs=2)
    page = httpx.URL(checkout["checkout"]["url"]).path
    shown = await client.get(page)
    assert shown.status_code == 200, shown.text
    assert f"<dt>Pay before</dt><dd>{deadline:%Y-%m-%d %H:%M} UTC</dd>" in shown.text, shown.text

    clock.advance(601)  # past payorch's deadline, well before the provider's 30 minutes
    ended = await client.get(page)
    assert "This checkout has expired" in ended.text, ended.text
    pressed = await client.post(page, data={"outcome": "approve"})
    assert pressed.status_code < 500
    assert (await read(client, sandbox, intent["id"]))["status"] != "AUTHORIZED"
