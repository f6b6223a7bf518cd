"""A second chance after a soft decline (docs/routing.md, "A second chance after a decline"),
through HTTP and the simulator on SQLite and PostgreSQL: the merchant routes B, then C, then A
and opts in with on_decline. A retryable decline confirmed by the provider keeps the intent
REQUIRES_ACTION, sends payment.attempt_failed and lands the buyer on payorch's page, whose button
starts a checkout at the next provider; anything else ends FAILED as before."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httpx

from payorch.runtime import Runtime
from tests.checkouts.helpers import B_CARD_ERROR, authorized_events, by_page, payment_count
from tests.checkouts.second_chance_helpers import (
    checkouts_of,
    market_declines,
    opted_in_start,
    press_retry,
    types_of,
)
from tests.dashboard.signing import sign_in
from tests.providers.browser import Browser
from tests.providers.helpers import A, B, events_of, query_of, read
from tests.routing.helpers import C, section

FUNDS = ("reject", "cardholder_name", "FUND", False)  # B: cc_rejected_insufficient_amount


async def test_b_declines_the_page_offers_c_and_c_is_paid(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox, intent_id, first = await opted_in_start(client, runtime)
    assert first["provider"] == B
    trip = await market_declines(client, sandbox, intent_id, B)
    assert trip.page is not None and urlsplit(trip.page.url).path == f"/checkout-retry/{intent_id}"
    text = trip.page.response.text
    assert "Your payment was declined by Provider B" in text and "try again with Provider C" in text
    declined = await read(client, sandbox, intent_id)
    assert declined["status"] == "REQUIRES_ACTION"
    assert declined["last_payment_error"]["provider_code"] == "cc_rejected_other_reason"
    events = await events_of(runtime, intent_id)
    assert "payment.failed" not in types_of(events)
    [attempt_failed] = [e for e in events if e["type"] == "payment.attempt_failed"]
    data = attempt_failed["data"]
    assert (data["attempt"], data["max_attempts"]) == (1, 3)
    assert data["provider"] == B and data["next_provider"] == C
    assert data["last_payment_error"]["code"] == "declined"

    at_c = await press_retry(client, trip)
    assert at_c.page is not None and "/simulator/" in at_c.page.url
    back = await Browser(client).press(at_c.page, "outcome", "approve")
    assert back.left_to is not None and query_of(back.left_to)["payment_intent_id"] == intent_id
    paid = await read(client, sandbox, intent_id)
    assert (paid["status"], paid["provider"]) == ("AUTHORIZED", C)
    assert authorized_events(await events_of(runtime, intent_id)) == 1
    assert await payment_count(runtime, intent_id) == 1
    attempts = paid["routing"]["attempts"]
    assert [(a["attempt"], a["provider"], a["result"], a["retryable"]) for a in attempts] == [
        (1, B, "declined", True),
        (2, C, None, None),
    ]
    assert attempts[0]["provider_code"] == "cc_rejected_other_reason"
    assert "rule 'b-first'" in attempts[1]["why"] and "declined" in attempts[1]["why"]
    assert {"provider": B, "reason": "declined"}.items() <= paid["routing"]["skipped"][0].items()
    await sign_in(client, sandbox)  # the dashboard's intent page lists the same attempts
    text = section((await client.get(f"/dashboard/payments/{intent_id}")).text)
    assert f"1 {B} first available of rule 'b-first' (routing version 1)" in text
    assert "declined (cc_rejected_other_reason), second chance offered" in text
    assert (
        f"2 {C} first available of rule 'b-first' (routing version 1); passed over: {B} declined current"
        in text
    )


async def test_a_non_retryable_decline_ends_failed_as_before(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox, intent_id, first = await opted_in_start(client, runtime)
    back = await by_page(client, sandbox.headers, intent_id, first, FUNDS)
    trip = await Browser(client).open(back)
    assert trip.left_to is not None and "/checkout-retry/" not in trip.left_to
    failed = await read(client, sandbox, intent_id)
    assert failed["status"] == "FAILED" and failed["last_payment_error"]["code"] == "insufficient_funds"
    kinds = types_of(await events_of(runtime, intent_id))
    assert kinds.count("payment.failed") == 1 and "payment.attempt_failed" not in kinds
    assert failed["routing"]["attempts"][0]["retryable"] is False


async def test_a_merchant_not_opted_in_fails_on_a_retryable_decline(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox, intent_id, first = await opted_in_start(client, runtime, retry=False)
    back = await by_page(client, sandbox.headers, intent_id, first, B_CARD_ERROR)  # retryable
    await Browser(client).open(back)
    assert (await read(client, sandbox, intent_id))["status"] == "FAILED"
    assert "payment.attempt_failed" not in types_of(await events_of(runtime, intent_id))


async def test_three_retryable_declines_end_failed_after_max_attempts(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox, intent_id, _ = await opted_in_start(client, runtime, max_attempts=3)
    trip = await market_declines(client, sandbox, intent_id, B)
    at_c = await press_retry(client, trip)
    assert at_c.page is not None
    trip = await market_declines(client, sandbox, intent_id, C)
    assert trip.page is not None and "try again with Provider A" in trip.page.response.text
    continuing = await press_retry(client, trip)  # A takes a POST form: payorch's page posts it
    assert continuing.page is not None
    at_a = await Browser(client).press(continuing.page, "continue", "1")
    assert at_a.page is not None
    ended = await Browser(client).press(at_a.page, "outcome", "error")  # A's error page: retryable
    assert ended.left_to is not None and "/checkout-retry/" not in ended.left_to
    failed = await read(client, sandbox, intent_id)
    assert failed["status"] == "FAILED" and failed["last_payment_error"]["code"] == "provider_error"
    kinds = types_of(await events_of(runtime, intent_id))
    assert kinds.count("payment.attempt_failed") == 2 and kinds.count("payment.failed") == 1
    attempts = failed["routing"]["attempts"]
    assert [(a["provider"], a["result"], a["retryable"]) for a in attempts] == [
        (B, "declined", True),
        (C, "declined", True),
        (A, None, True),
    ]


async def test_no_attempts_left_ends_failed_though_a_provider_is_left(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox, intent_id, _ = await opted_in_start(client, runtime, max_attempts=2)
    await press_retry(client, await market_declines(client, sandbox, intent_id, B))
    trip = await market_declines(client, sandbox, intent_id, C)
    assert trip.left_to is not None
    assert (await read(client, sandbox, intent_id))["status"] == "FAILED"


async def test_a_forged_return_claiming_a_decline_changes_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox, intent_id, first = await opted_in_start(client, runtime)
    preference = query_of(first["checkout"]["url"])["pref_id"]
    forged = {
        "preference_id": preference,
        "external_reference": intent_id,
        "payment_id": "12345678901",
        "collection_id": "12345678901",
        "status": "rejected",
        "collection_status": "rejected",
    }
    answer = await client.get(f"/v1/checkout-returns/{B}/{intent_id}", params=forged)
    assert answer.status_code == 303 and "/checkout-retry/" not in answer.headers["location"]
    still = await read(client, sandbox, intent_id)
    assert still["status"] == "REQUIRES_ACTION" and "last_payment_error" not in still
    assert "payment.attempt_failed" not in types_of(await events_of(runtime, intent_id))
    assert (await client.get(f"/checkout-retry/{intent_id}")).status_code == 303  # no offer
    # The provider confirms a decline: now the buyer is offered C.
    trip = await market_declines(client, sandbox, intent_id, B)
    assert trip.page is not None and "Provider C" in trip.page.response.text


async def test_two_clicks_at_once_make_one_checkout(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox, intent_id, _ = await opted_in_start(client, runtime)
    trip = await market_declines(client, sandbox, intent_id, B)
    assert trip.page is not None
    form = trip.page.form_with_button("retry", "1")
    fields = {**form.fields, "retry": "1"}
    url = f"/checkout-retry/{intent_id}"
    first, second = await asyncio.gather(client.post(url, data=fields), client.post(url, data=fields))
    assert first.status_code == second.status_code == 303, (first.text, second.text)
    assert first.headers["location"] == second.headers["location"]
    assert await checkouts_of(runtime, intent_id) == 2  # B's, declined, and one at C
    later = await client.post(url, data=fields)  # a third click after both finished
    assert later.status_code == 303 and later.headers["location"] == first.headers["location"]
    assert await checkouts_of(runtime, intent_id) == 2
    kinds = types_of(await events_of(runtime, intent_id))
    assert kinds.count("payment.checkout.started") == 2


async def test_a_forged_click_starts_nothing(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox, intent_id, _ = await opted_in_start(client, runtime)
    trip = await market_declines(client, sandbox, intent_id, B)
    assert trip.page is not None
    fields = dict(trip.page.form_with_button("retry", "1").fields)
    client.cookies.clear()  # another site's form: no cookie of ours
    forged = await client.post(f"/checkout-retry/{intent_id}", data=fields)
    assert forged.status_code == 403
    assert await checkouts_of(runtime, intent_id) == 1
