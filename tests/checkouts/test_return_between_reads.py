"""The buyer's return while provider B's notification of the decline commits between the return's
two reads (the intent, then its active checkout: each its own statement on PostgreSQL,
checkouts/confirm.py). tests/checkouts/test_second_chance_browser.py met it about once in ten
runs at load 2-5: the buyer was sent to the shop with REQUIRES_ACTION, the second chance lost."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.checkouts import repository
from payorch.checkouts.records import Checkout
from payorch.runtime import Runtime
from tests.checkouts.second_chance_helpers import opted_in_start
from tests.conformance.network import HeldNotification, Network
from tests.providers.helpers import B, choose_without_returning, read


@pytest.fixture
def local_app() -> Network:
    """The runtime's in-process calls, its notifications held on demand (tests/conformance)."""
    return Network()


async def deliver(client: httpx.AsyncClient, held: HeldNotification) -> None:
    headers = {k: v for k, v in held.headers.items() if k not in ("host", "content-length")}
    answer = await client.post(f"{held.path}?{held.query}", headers=headers, content=held.body)
    assert answer.status_code == 200, answer.text


async def test_a_decline_notified_between_the_returns_reads_still_offers_a_second_chance(
    client: httpx.AsyncClient, runtime: Runtime, local_app: Network, monkeypatch: pytest.MonkeyPatch
) -> None:
    if runtime.database.is_sqlite:
        pytest.skip("SQLite: the confirm's reads are one transaction, the one writer; nothing gets between")
    sandbox, intent_id, first = await opted_in_start(client, runtime)
    assert first["provider"] == B
    local_app.hold_notifications()
    try:
        back = await choose_without_returning(client, first, "reject")
    finally:
        late = local_app.release()
    assert late, "B notifies the rejection"
    active_for_intent = repository.active_for_intent

    async def notified_first(conn: AsyncConnection, payment_intent_id: str) -> Checkout | None:
        while late:  # the return has read the intent: the notification commits now
            await deliver(client, late.pop(0))
        return await active_for_intent(conn, payment_intent_id)

    monkeypatch.setattr(repository, "active_for_intent", notified_first)
    returned = await client.get(back)
    assert returned.status_code == 303, returned.text
    assert urlsplit(returned.headers["location"]).path == f"/checkout-retry/{intent_id}"
    declined = await read(client, sandbox, intent_id)
    assert declined["status"] == "REQUIRES_ACTION" and declined["last_payment_error"] is not None
