"""provider_c_redirect_get adapter against its simulator (in-process, MOCK credentials): the
buyer's trip, the forged returns (paid said, open at the provider; cancelled said, paid at the
provider), refunds, events verified then read, the lifetime mapping."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import httpx
import pytest

from payorch.ids import new_id
from payorch.providers.base import (
    CheckoutRef,
    ConnectorContext,
    IncomingNotification,
    InvalidNotification,
    Mode,
    PaymentOutcome,
    ProviderRefundOutcome,
    ProviderRejected,
    RefundRequest,
)
from payorch.providers.provider_c import PROVIDER_C
from payorch.providers.provider_c.adapter import ProviderCAdapter
from payorch.providers.provider_c.registration import mock_credentials
from payorch.providers.provider_c.signature import sign
from payorch.runtime import Runtime
from tests.kit import Sandbox
from tests.providers.helpers import connector_context, start_session
from tests.simulator.provider_c_app import HOOK_URL, Events, c_app, c_headers

__all__ = ["c_app"]
adapter = ProviderCAdapter()


@pytest.fixture
def http(c_app: tuple[httpx.AsyncClient, Events]) -> httpx.AsyncClient:
    return c_app[0]


def make_ctx(runtime: Runtime, sandbox: Sandbox) -> ConnectorContext:
    return connector_context(
        PROVIDER_C,
        mode=Mode.MOCK,
        base_url=adapter.base_url(Mode.MOCK, "http://testserver"),
        credentials=mock_credentials(runtime.cipher, sandbox.application_id),
        http=runtime.http,
        clock=runtime.clock,
        application_id=sandbox.application_id,
        timeout_seconds=5,
    )


async def start(
    ctx: ConnectorContext, amount: int = 15000, currency: str = "CLP"
) -> tuple[CheckoutRef, str, Any]:
    ref, session = await start_session(
        adapter, ctx, amount=amount, currency=currency, description="Book", notification_url=HOOK_URL
    )
    return ref, session.url, session


async def press(http: httpx.AsyncClient, url: str, outcome: str) -> httpx.Response:
    return await http.post(httpx.URL(url).path, data={"outcome": outcome})


async def test_paid_on_the_page_confirms_authorized_and_refunds(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ctx = make_ctx(runtime, sandbox)
    ref, url, session = await start(ctx)
    assert session.method == "GET" and session.fields == {}
    back = await press(http, url, "approve")
    params = dict(httpx.URL(back.headers["location"]).params)
    assert params == {"session_id": ref.provider_reference}
    result = await adapter.confirm_return(ctx, ref, params)
    assert result.outcome is PaymentOutcome.AUTHORIZED and result.amount == 15000
    assert result.provider_payment_reference and result.provider_payment_reference.startswith("pi_")
    refund = RefundRequest(new_id("rfd"), result.provider_payment_reference, 5000, "CLP", 15000, 0)
    done = await adapter.refund(ctx, refund)
    assert done.outcome is ProviderRefundOutcome.SUCCEEDED
    assert (await adapter.refund(ctx, refund)).provider_refund_reference == done.provider_refund_reference
    assert (await adapter.read_refund(ctx, refund)).outcome is ProviderRefundOutcome.SUCCEEDED
    never = RefundRequest(new_id("rfd"), result.provider_payment_reference, 1000, "CLP", 15000, 5000)
    assert (await adapter.read_refund(ctx, never)).outcome is ProviderRefundOutcome.NOT_APPLIED
    too_much = RefundRequest(new_id("rfd"), result.provider_payment_reference, 10001, "CLP", 15000, 5000)
    with pytest.raises(ProviderRejected) as refused:
        await adapter.refund(ctx, too_much)
    assert refused.value.code == "amount_too_large"


async def test_a_return_saying_paid_while_the_provider_says_open_moves_nothing(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ctx = make_ctx(runtime, sandbox)
    ref, url, _ = await start(ctx)
    await press(http, url, "reject")  # declined: open, unpaid
    result = await adapter.confirm_return(ctx, ref, {"session_id": ref.provider_reference, "status": "paid"})
    assert result.outcome is PaymentOutcome.NOT_PAID


async def test_a_cancel_return_while_the_provider_says_paid_is_authorized(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ctx = make_ctx(runtime, sandbox)
    ref, url, _ = await start(ctx)
    await press(http, url, "approve")  # paid in another tab
    result = await adapter.confirm_return(ctx, ref, {"cancelled": ref.checkout_id})
    assert result.outcome is PaymentOutcome.AUTHORIZED


async def test_a_cancel_return_stops_the_session_before_cancelling(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ctx = make_ctx(runtime, sandbox)
    ref, url, _ = await start(ctx)
    back = await press(http, url, "cancel")
    params = dict(httpx.URL(back.headers["location"]).params)
    result = await adapter.confirm_return(ctx, ref, params)
    assert result.outcome is PaymentOutcome.CANCELLED
    assert (await press(http, url, "approve")).status_code == 409  # it can no longer be paid


@pytest.mark.parametrize("params", [{"session_id": "cs_test_someoneelse"}, {"cancelled": "chk_guessed"}, {}])
async def test_a_return_naming_another_checkout_is_ignored(
    runtime: Runtime, sandbox: Sandbox, http: httpx.AsyncClient, params: dict[str, str]
) -> None:
    ctx = make_ctx(runtime, sandbox)
    ref, _, _ = await start(ctx)
    assert (await adapter.confirm_return(ctx, ref, params)).outcome is PaymentOutcome.IGNORED


async def test_pending_is_processing_then_the_settled_payment_authorized(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    from payorch.simulator.provider_c.simulated import settle

    ctx = make_ctx(runtime, sandbox)
    ref, url, _ = await start(ctx)
    await press(http, url, "pending")
    assert (await adapter.read_status(ctx, ref)).outcome is PaymentOutcome.PROCESSING
    async with runtime.database.transaction() as conn:
        await settle(
            conn, runtime.clock, "http://testserver", sandbox.application_id, ref.payment_intent_id, "reject"
        )
    assert (await adapter.read_status(ctx, ref)).outcome is PaymentOutcome.FAILED


async def test_the_checkout_lifetime_maps_to_the_providers_window(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ctx = make_ctx(runtime, sandbox)
    ref, _, session = await start(ctx)
    now = runtime.clock.now()
    assert session.expires_at == now + timedelta(minutes=10)  # ours: the checkout TTL
    read = await http.get(
        f"/simulator/provider_c/v1/checkout/sessions/{ref.provider_reference}",
        headers=c_headers(runtime, sandbox.application_id),
    )
    assert read.json()["expires_at"] >= int(
        (now + timedelta(minutes=30)).timestamp()
    )  # the provider's minimum
    stopped = await adapter.cancel_checkout(ctx, ref)
    assert stopped.outcome is PaymentOutcome.NOT_PAID


async def test_an_event_is_verified_then_the_session_read(
    http: httpx.AsyncClient, c_app: tuple[httpx.AsyncClient, Events], runtime: Runtime, sandbox: Sandbox
) -> None:
    events = c_app[1]
    ctx = make_ctx(runtime, sandbox)
    ref, url, _ = await start(ctx)
    await press(http, url, "approve")
    for _ in range(500):
        if events.received:
            break
        await asyncio.sleep(0.02)
    headers, body = events.received[0]
    notice = await adapter.parse_notification(ctx, IncomingNotification(headers, {}, body))
    assert notice.payment_intent_id == ref.payment_intent_id and notice.confirm is not None
    assert (await notice.confirm(ctx, ref)).outcome is PaymentOutcome.AUTHORIZED
    # A body forged to name the session is refused without the secret, or when stale.
    forged = json.dumps(json.loads(body)).encode()
    secret = ctx.credentials["webhook_secret"]
    now = int(runtime.clock.now().timestamp())
    for signature in (sign("whsec_wrong", forged, now), sign(secret, forged, now - 301), "t=1"):
        with pytest.raises(InvalidNotification):
            await adapter.parse_notification(
                ctx, IncomingNotification({"Stripe-Signature": signature}, {}, forged)
            )
