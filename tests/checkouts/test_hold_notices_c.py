"""Provider C's hold events are hints, through HTTP on SQLite and PostgreSQL: payorch subscribes
to `payment_intent.amount_capturable_updated`, `charge.captured`, `payment_intent.canceled` and
`charge.expired`, and on each reads the PaymentIntent before anything moves. Each signed notice
sent while the provider says the opposite moves nothing; sent after the provider moved (a capture
or a cancel made at the provider, a hold let lapse), it settles the payment as the provider
says: captured (what it captured), voided, or lapsed."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from payorch.db.tables.providers import payments
from payorch.ids import new_id
from payorch.providers.base import ProviderUnavailable
from payorch.providers.provider_c.signature import sign
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime
from tests.checkouts.helpers import connector_id
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import pay, read, start

pytestmark = pytest.mark.slow  # payments at the simulator: seconds

C = "provider_c_redirect_get"
HOLD_EVENTS = (
    "payment_intent.amount_capturable_updated",
    "charge.captured",
    "payment_intent.canceled",
    "charge.expired",
)


async def _notify(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, kind: str, intent: str
) -> None:
    answer = await _send(client, runtime, sandbox, kind, intent)
    assert answer.status_code == 200, answer.text


async def _send(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, kind: str, intent: str
) -> httpx.Response:
    """A signed notice of ``kind`` naming the PaymentIntent (a charge.* names it as its charge's)."""
    named = (
        {"id": "ch_" + new_id("x")[-20:], "payment_intent": intent}
        if kind.startswith("charge.")
        else {"id": intent}
    )
    body = json.dumps({"id": "evt_" + new_id("x")[-20:], "type": kind, "data": {"object": named}}).encode()
    secret = registration_of(C).mock_credentials(runtime.cipher, sandbox.application_id)["webhook_secret"]
    headers = {"Stripe-Signature": sign(secret, body, int(runtime.clock.now().timestamp()))}
    connector = await connector_id(client, sandbox, C)
    return await client.post(f"/v1/provider-notifications/{C}/{connector}", content=body, headers=headers)


async def _at_provider(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, path: str, **form: str
) -> None:
    key = registration_of(C).mock_credentials(runtime.cipher, sandbox.application_id)["secret_key"]
    answer = await client.post(
        f"/simulator/{registration_of(C).simulator_name}{path}",
        data=form,
        headers={"Authorization": f"Bearer {key}"},
    )
    assert answer.status_code == 200, answer.text


async def _paid(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, capture_method: str
) -> tuple[dict[str, Any], str]:
    """The intent paid on C's page, and its PaymentIntent's id (the payment's provider reference)."""
    intent, body = await start(client, sandbox, C, amount=1500, capture_method=capture_method)
    await pay(client, body, "approve")
    after = await read(client, sandbox, intent["id"])
    query = select(payments.c.provider_reference).where(payments.c.id == after["payment"]["id"])
    async with runtime.database.transaction() as conn:
        return after, str((await conn.execute(query)).scalar_one())


async def _types(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str) -> list[str]:
    return [entry["type"] for entry in (await read(client, sandbox, intent_id))["timeline"]]


async def test_hold_notices_while_the_provider_says_the_opposite_move_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    held, reference = await _paid(client, runtime, sandbox, "manual")
    assert held["status"] == "REQUIRES_CAPTURE", held
    before = await _types(client, sandbox, held["id"])
    for kind in HOLD_EVENTS:  # captured, canceled, expired: the PaymentIntent still requires_capture
        await _notify(client, runtime, sandbox, kind, reference)
    after = await read(client, sandbox, held["id"])
    assert after["status"] == "REQUIRES_CAPTURE" and after["payment"]["amount_captured"] == 0, after
    assert await _types(client, sandbox, held["id"]) == before

    taken, reference = await _paid(client, runtime, sandbox, "automatic")  # held, says the notice
    assert taken["status"] == "AUTHORIZED", taken  # succeeded, says C
    await _notify(client, runtime, sandbox, HOLD_EVENTS[0], reference)
    again = await read(client, sandbox, taken["id"])
    assert (again["status"], again["payment"]["amount_captured"]) == ("AUTHORIZED", 1500), again


async def test_hold_notices_after_the_provider_moved_settle_as_it_says(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    made = [await _paid(client, runtime, sandbox, "manual") for _ in range(3)]
    (captured, _), (voided, _), (lapsed, _) = made
    references = [reference for _, reference in made]
    await _at_provider(
        client, runtime, sandbox, f"/v1/payment_intents/{references[0]}/capture", amount_to_capture="1000"
    )
    await _at_provider(client, runtime, sandbox, f"/v1/payment_intents/{references[1]}/cancel")
    for kind, reference in zip(HOLD_EVENTS[1:], references, strict=True):
        await _notify(client, runtime, sandbox, kind, reference)
    after = await read(client, sandbox, captured["id"])
    assert (after["status"], after["payment"]["amount_captured"]) == ("AUTHORIZED", 1000), after
    assert (await read(client, sandbox, voided["id"]))["status"] == "CANCELLED"
    assert (await read(client, sandbox, lapsed["id"]))["status"] == "REQUIRES_CAPTURE"  # C still holds it

    clock = await client.post(
        "/simulator/controls/clock",
        json={"advance_seconds": 8 * 86400, "provider": C},
        headers=sandbox.headers,
    )
    assert clock.status_code == 200, clock.text
    await _notify(client, runtime, sandbox, "charge.expired", references[2])
    assert (await read(client, sandbox, lapsed["id"]))["status"] == "EXPIRED"


async def test_a_hold_notice_whose_read_fails_is_answered_503_and_sent_again(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answered 200, C would never send the notice again: a hold read that fails answers 503,
    moves nothing, and the notice sent again once C answers settles the payment."""
    sandbox = await mock_sandbox(runtime)
    held, reference = await _paid(client, runtime, sandbox, "manual")
    calls = registration_of(C).hold_calls
    assert calls is not None

    async def unreachable(*_: Any) -> Any:
        raise ProviderUnavailable("no answer within 2s", provider=C)

    with monkeypatch.context() as patched:
        patched.setattr(calls, "read_hold", unreachable)
        # C's own notice of this cancel meets the same failing read (and is sent again later).
        await _at_provider(client, runtime, sandbox, f"/v1/payment_intents/{reference}/cancel")
        answer = await _send(client, runtime, sandbox, "payment_intent.canceled", reference)
    assert answer.status_code == 503, answer.text
    assert (await read(client, sandbox, held["id"]))["status"] == "REQUIRES_CAPTURE"
    again = await _send(client, runtime, sandbox, "payment_intent.canceled", reference)
    assert again.status_code == 200, again.text
    assert (await read(client, sandbox, held["id"]))["status"] == "CANCELLED"
