"""Returns and notifications that say the opposite of the provider: the provider decides.

Each test sets the provider's real state with the simulator's page (without following its
redirect), then sends a return or notification whose shape contradicts it. Provider B's page
notifies us at once; a fault on its API makes that notification fail (503, retried later), so
the contradicting return is what arrives first. SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx
import pytest

from payorch.checkouts.expiry_job import ExpireCheckouts
from payorch.clock import FrozenClock
from payorch.providers.provider_a import wire as a_wire
from payorch.providers.provider_d import PROVIDER_D
from payorch.runtime import Runtime
from payorch.simulator.credentials import mock_credentials
from tests.checkouts.cancel_helpers import cancel
from tests.checkouts.helpers import (
    C,
    authorized_events,
    b_choose_silently,
    b_notify,
    payment_count,
    run_until_idle,
)
from tests.databases import own_database
from tests.kit import Sandbox, chosen_providers, mock_sandbox
from tests.providers.helpers import (
    A,
    B,
    checkout,
    choose_without_returning,
    events_of,
    open_checkout,
    pay,
    press_without_returning,
    query_of,
    read,
    simulated_a_status,
    start,
)

database_url = own_database  # the expiry job sweeps the database: this module gets its own
# B's page notifies at once under a fault held for the whole request: each failed notice's quick
# retries cannot succeed.
pytestmark = pytest.mark.usefixtures("brisk_quick_retries")

# -- provider A -----------------------------------------------------------------------------------

# The shapes a browser can bring back besides the normal end (token_ws alone), and where each
# ends when the provider says nothing was paid.
A_SHAPES = {
    "abort_token_only": (("TBK_TOKEN",), "CANCELLED"),
    "abort": (("TBK_TOKEN", "TBK_ORDEN_COMPRA", "TBK_ID_SESION"), "CANCELLED"),
    "timeout": (("TBK_ORDEN_COMPRA", "TBK_ID_SESION"), "EXPIRED"),
    "error_page": (("token_ws", "TBK_TOKEN"), "FAILED"),
}


async def a_transaction(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, token: str
) -> dict[str, Any]:
    """What provider A itself says about ``token`` (its status call, as the adapter makes it)."""
    keys = mock_credentials(runtime.cipher, "provider_a", sandbox.application_id)
    response = await client.get(
        f"/simulator/provider_a{a_wire.TRANSACTIONS}/{token}",
        headers={
            "Tbk-Api-Key-Id": keys["commerce_code"],
            "Tbk-Api-Key-Secret": keys["api_key"],
        },
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def a_shape(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, body: dict[str, Any], shape: str
) -> dict[str, str]:
    """The return fields of ``shape`` for this checkout, with its real token, order and session
    (what someone holding the buyer's page could send)."""
    token = body["checkout"]["fields"]["token_ws"]
    tx = await a_transaction(client, runtime, sandbox, token)
    values = {
        "token_ws": token,
        "TBK_TOKEN": token,
        "TBK_ORDEN_COMPRA": tx["buy_order"],
        "TBK_ID_SESION": tx["session_id"],
    }
    return {name: values[name] for name in A_SHAPES[shape][0]}


async def send_return(
    client: httpx.AsyncClient, provider: str, intent_id: str, params: dict[str, str], method: str
) -> None:
    url = f"/v1/checkout-returns/{provider}/{intent_id}"
    if method == "GET":
        response = await client.get(url, params=params)
    else:
        response = await client.post(url, data=params)
    assert response.status_code == 303, response.text
    assert query_of(response.headers["location"])["payment_intent_id"] == intent_id


async def assert_authorized_once(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, intent_id: str
) -> None:
    assert (await read(client, sandbox, intent_id))["status"] == "AUTHORIZED"
    assert await payment_count(runtime, intent_id) == 1
    assert authorized_events(await events_of(runtime, intent_id)) == 1


# Each shape, by GET and by POST (the abort comes back as a POSTed form).
EVERY_A_SHAPE = pytest.mark.parametrize(
    ("shape", "method"), [(shape, method) for shape in A_SHAPES for method in ("GET", "POST")]
)
PROVIDER_A_SAYS = {"approve": "AUTHORIZED", "reject": "FAILED", None: "INITIALIZED"}


async def a_abort_shaped_return(
    client: httpx.AsyncClient, runtime: Runtime, shape: str, method: str, buyer: str | None
) -> tuple[Sandbox, dict[str, Any], dict[str, Any], str | None]:
    """The buyer presses ``buyer`` at provider A's page (None: still paying) without coming back;
    then a return of ``shape`` arrives by ``method``. Answer the sandbox, the intent, the checkout
    and the genuine return address (None while the buyer is still paying)."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A)
    genuine = await choose_without_returning(client, body, buyer) if buyer else None
    token = body["checkout"]["fields"]["token_ws"]
    said = (await a_transaction(client, runtime, sandbox, token))["status"]
    assert said == PROVIDER_A_SAYS[buyer]
    params = await a_shape(client, runtime, sandbox, body, shape)
    await send_return(client, A, intent["id"], params, method)
    return sandbox, intent, body, genuine


@EVERY_A_SHAPE
async def test_a_abort_shaped_return_of_a_paid_checkout_authorizes(
    client: httpx.AsyncClient, runtime: Runtime, shape: str, method: str
) -> None:
    sandbox, intent, _, genuine = await a_abort_shaped_return(client, runtime, shape, method, "approve")
    await assert_authorized_once(client, runtime, sandbox, intent["id"])
    # The genuine return that follows changes nothing more.
    assert genuine is not None and (await client.get(genuine)).status_code == 303
    await assert_authorized_once(client, runtime, sandbox, intent["id"])


@EVERY_A_SHAPE
async def test_a_abort_shaped_return_while_the_buyer_is_paying_changes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, shape: str, method: str
) -> None:
    sandbox, intent, body, _ = await a_abort_shaped_return(client, runtime, shape, method, None)
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    assert [e["type"] for e in await events_of(runtime, intent["id"])] == [
        "payment_intent.created",
        "payment.checkout.started",
    ]
    # The buyer was still on the page: they pay, and that counts.
    await pay(client, body, "approve")
    await assert_authorized_once(client, runtime, sandbox, intent["id"])


@EVERY_A_SHAPE
async def test_a_abort_shaped_return_ends_only_what_the_provider_did_not_pay(
    client: httpx.AsyncClient, runtime: Runtime, shape: str, method: str
) -> None:
    sandbox, intent, _, _ = await a_abort_shaped_return(client, runtime, shape, method, "reject")
    assert (await read(client, sandbox, intent["id"]))["status"] == A_SHAPES[shape][1]
    assert await payment_count(runtime, intent["id"]) == 0


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    ("provider_state", "expected"),
    [("reject", "FAILED"), ("cancel", "FAILED"), ("timeout", "FAILED"), (None, "REQUIRES_ACTION")],
)
async def test_a_normal_return_of_an_unpaid_checkout_never_authorizes(
    client: httpx.AsyncClient,
    runtime: Runtime,
    provider_state: str | None,
    expected: str,
    method: str,
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A)
    if provider_state is not None:  # the buyer rejected or aborted; None: still on the page
        await press_without_returning(client, body, provider_state)
    token = body["checkout"]["fields"]["token_ws"]
    await send_return(client, A, intent["id"], {"token_ws": token}, method)
    assert (await read(client, sandbox, intent["id"]))["status"] == expected
    assert await payment_count(runtime, intent["id"]) == 0


# -- provider B -----------------------------------------------------------------------------------


def b_return(genuine: dict[str, str], **changes: str) -> dict[str, str]:
    """The genuine return with some fields changed (the parts the browser controls)."""
    params = {k: v for k, v in genuine.items() if k != "payment_intent_id"}
    params.update(changes)
    return params


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_b_notification_signed_now_with_a_wrong_secret_is_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """A fresh ts (so not refused as stale) and a wrong signature: refused, nothing changes; the
    same notification correctly signed is accepted and authorizes once."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    genuine = await b_choose_silently(client, sandbox, body, "approve")
    forged = await b_notify(client, runtime, sandbox, genuine["payment_id"], "approved", "0" * 64)
    assert forged.status_code == 400, forged.text
    assert set(forged.json()["error"]) == {"code", "message", "request_id", "details"}
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    assert await payment_count(runtime, intent["id"]) == 0
    signed = await b_notify(client, runtime, sandbox, genuine["payment_id"], "approved")
    assert signed.status_code == 200, signed.text
    await assert_authorized_once(client, runtime, sandbox, intent["id"])


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    "says",
    [
        {"status": "rejected", "collection_status": "rejected"},
        {"status": "pending", "collection_status": "pending"},
        {"status": "in_process", "collection_status": "in_process"},
        {"status": "null", "collection_status": "null"},
        {"status": "null", "payment_id": "null", "collection_id": "null"},
        {"status": "rejected", "payment_id": "null", "collection_id": "null"},
    ],
    ids=["rejected", "pending", "in_process", "null", "null_payment", "rejected_null_payment"],
)
async def test_b_return_saying_unpaid_of_an_approved_payment_authorizes(
    client: httpx.AsyncClient, runtime: Runtime, says: dict[str, str], method: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    genuine = await b_choose_silently(client, sandbox, body, "approve")
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    await send_return(client, B, intent["id"], b_return(genuine, **says), method)
    await assert_authorized_once(client, runtime, sandbox, intent["id"])
    # The genuine return and the late notification change nothing more.
    await send_return(client, B, intent["id"], b_return(genuine), "GET")
    assert (await b_notify(client, runtime, sandbox, genuine["payment_id"], "x")).status_code == 200
    await assert_authorized_once(client, runtime, sandbox, intent["id"])


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize("via", ["return", "notification"])
async def test_b_a_stale_rejection_does_not_hide_the_retry_that_paid(
    client: httpx.AsyncClient, runtime: Runtime, via: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    rejected = await b_choose_silently(client, sandbox, body, "reject")
    approved = await b_choose_silently(client, sandbox, body, "approve")  # tried again, paid
    assert rejected["payment_id"] != approved["payment_id"]
    # The first attempt's genuine return (or its notification) arrives last.
    if via == "return":
        await send_return(client, B, intent["id"], b_return(rejected), "GET")
    else:
        notified = await b_notify(client, runtime, sandbox, rejected["payment_id"], "rejected")
        assert notified.status_code == 200, notified.text
    await assert_authorized_once(client, runtime, sandbox, intent["id"])


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    ("provider_state", "says", "expected"),
    [
        ("reject", {}, "FAILED"),
        ("pending", {}, "PROCESSING"),
        (None, {"payment_id": "12345678901", "collection_id": "12345678901"}, "REQUIRES_ACTION"),
        (None, {"payment_id": "null", "collection_id": "null"}, "CANCELLED"),
    ],
    ids=["rejected", "pending", "unknown_payment", "no_payment"],
)
async def test_b_return_saying_approved_of_an_unpaid_checkout_never_authorizes(
    client: httpx.AsyncClient,
    runtime: Runtime,
    provider_state: str | None,
    says: dict[str, str],
    expected: str,
    method: str,
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    if provider_state is None:  # the buyer has not paid: the page's own return fields, no payment
        preference = query_of(body["checkout"]["url"])["pref_id"]
        genuine = {"preference_id": preference, "external_reference": intent["id"]}
    else:
        genuine = await b_choose_silently(client, sandbox, body, provider_state)
    forged = b_return(genuine, status="approved", collection_status="approved", **says)
    await send_return(client, B, intent["id"], forged, method)
    assert (await read(client, sandbox, intent["id"]))["status"] == expected
    assert await payment_count(runtime, intent["id"]) == 0
    if expected == "CANCELLED":  # the provider confirmed the preference can no longer be paid
        trip = await open_checkout(client, body)
        assert trip.page is not None
        assert not any(("outcome", "approve") in form.buttons for form in trip.page.forms)


async def test_b_signed_notification_claiming_approval_of_a_pending_payment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    pending = await b_choose_silently(client, sandbox, body, "pending")
    answer = await b_notify(client, runtime, sandbox, pending["payment_id"], "payment.approved")
    assert answer.status_code == 200, answer.text
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    assert await payment_count(runtime, intent["id"]) == 0


# -- the expiry job and the checkout replacement --------------------------------------------------


# The buyer's silent approval is A's and B's own steps (paid_without_return).
UNRETURNED = chosen_providers(
    A,
    B,
    left_out={
        C: "every provider's forged returns: tests/conformance/test_forged.py",
        PROVIDER_D: "every provider's forged returns: tests/conformance/test_forged.py",
    },
)


async def paid_without_return(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> tuple[Sandbox, dict[str, Any]]:
    """The buyer approves at the provider and never comes back (nor, for B, does the notice)."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, provider)
    if provider == A:
        await choose_without_returning(client, body, "approve")
    else:
        await b_choose_silently(client, sandbox, body, "approve")
    return sandbox, {**intent, "checkout_expires_at": body["expires_at"]}


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize("provider", UNRETURNED)
async def test_expiry_of_a_checkout_paid_without_return_authorizes(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, provider: str
) -> None:
    """The expiry job runs when the checkout's time is up (every 5 s): for provider A that is
    within the commit window, so it commits the approval it finds."""
    sandbox, intent = await paid_without_return(client, runtime, provider)
    clock.set(datetime.fromisoformat(intent["checkout_expires_at"].replace("Z", "+00:00")))
    clock.advance(5)
    await run_until_idle(ExpireCheckouts(), runtime)
    await assert_authorized_once(client, runtime, sandbox, intent["id"])


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize("provider", UNRETURNED)
async def test_replacing_a_checkout_paid_without_return_authorizes(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox, intent = await paid_without_return(client, runtime, provider)
    replaced = await checkout(client, sandbox, intent["id"], A if provider == B else B)
    assert replaced.status_code == 409, replaced.text
    assert replaced.json()["error"]["code"] == "INVALID_STATE"
    await assert_authorized_once(client, runtime, sandbox, intent["id"])


@pytest.mark.parametrize("actor", ["expiry", "replacement", "cancel"])
async def test_a_an_approval_found_without_return_is_committed_not_just_read(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, actor: str
) -> None:
    """Commit-or-lapse: whoever finds provider A's approval (the expiry job, a replacement, a
    cancel) commits it before recording AUTHORIZED, so the provider does not reverse it after
    the commit window and payorch's payment is real money."""
    from payorch.simulator.provider_a.wire import COMMIT_WINDOW_SECONDS

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A)
    await choose_without_returning(client, body, "approve")
    if actor == "expiry":
        clock.set(datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00")))
        clock.advance(5)
        await run_until_idle(ExpireCheckouts(), runtime)
    elif actor == "replacement":
        assert (await checkout(client, sandbox, intent["id"], B)).status_code == 409
    else:
        assert (await cancel(client, sandbox, intent["id"])).status_code == 409
    await assert_authorized_once(client, runtime, sandbox, intent["id"])
    clock.advance(COMMIT_WINDOW_SECONDS + 1)
    token = body["checkout"]["fields"]["token_ws"]
    status = (await simulated_a_status(client, runtime, sandbox, token)).json()
    assert status["status"] == "AUTHORIZED" and status["response_code"] == 0, status
    refund = await client.post(
        f"/v1/payments/{(await read(client, sandbox, intent['id']))['payment']['id']}/refunds",
        json={"amount": 100},
        headers={**sandbox.headers, "Idempotency-Key": "r-" + actor},
    )
    assert refund.status_code in (200, 201), refund.text
    assert refund.json()["status"] == "SUCCEEDED"
