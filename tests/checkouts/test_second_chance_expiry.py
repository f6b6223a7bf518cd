"""A second chance nobody takes (docs/checkout.md, "A second chance after a decline"), through
HTTP on SQLite and PostgreSQL with a frozen clock: once the checkout lifetime has passed since
the decline, the checkout-expiry job ends the intent FAILED with payment.failed carrying the
decline's error, once; a press after that end starts nothing (410, in words); a press racing
the job has exactly one outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from payorch.checkouts.expiry_job import ExpireCheckouts
from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from tests.checkouts.helpers import run_until_idle
from tests.checkouts.second_chance_helpers import checkouts_of, market_declines, opted_in, started, types_of
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import B, events_of, read

ENDED = "The time to try again ran out, so this payment was not completed. Nothing was charged."


async def offered(client: httpx.AsyncClient, sandbox: Sandbox) -> tuple[str, dict[str, str]]:
    """An intent declined at B with C offered; answer it and the page's button form."""
    intent_id, _ = await started(client, sandbox)
    trip = await market_declines(client, sandbox, intent_id, B)
    assert trip.page is not None and "/checkout-retry/" in trip.page.url
    return intent_id, {**trip.page.form_with_button("retry", "1").fields, "retry": "1"}


async def one_offer(client: httpx.AsyncClient, runtime: Runtime) -> tuple[Sandbox, str, dict[str, str]]:
    """A merchant opted in and one intent offered a second chance."""
    sandbox = await mock_sandbox(runtime)
    await opted_in(client, sandbox)
    return (sandbox, *await offered(client, sandbox))


def failed_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "payment.failed"]


async def test_an_offer_nobody_takes_ends_failed_once(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox, intent_id, form = await one_offer(client, runtime)
    ttl = runtime.settings.checkout_ttl_seconds
    clock.advance(ttl - 1)
    await run_until_idle(ExpireCheckouts(), runtime)
    assert (await read(client, sandbox, intent_id))["status"] == "REQUIRES_ACTION"  # still offered
    clock.advance(1)
    await run_until_idle(ExpireCheckouts(), runtime)
    failed = await read(client, sandbox, intent_id)
    assert failed["status"] == "FAILED"
    assert failed["last_payment_error"]["provider_code"] == "cc_rejected_other_reason"
    clock.advance(ttl)
    await run_until_idle(ExpireCheckouts(), runtime)  # a later run changes nothing
    events = await events_of(runtime, intent_id)
    [event] = failed_events(events)
    assert event["data"]["provider"] == B
    assert event["data"]["last_payment_error"] == failed["last_payment_error"]
    assert event["data"]["last_payment_error"]["code"] == "declined"
    assert types_of(events).count("payment.attempt_failed") == 1

    page = await client.get(f"/checkout-retry/{intent_id}")
    assert page.status_code == 410 and ENDED in page.text and "This offer has ended" in page.text
    pressed = await client.post(f"/checkout-retry/{intent_id}", data=form)
    assert pressed.status_code == 410 and ENDED in pressed.text
    spanish = await client.post(f"/checkout-retry/{intent_id}", data={**form, "lang": "es"})
    assert spanish.status_code == 410 and "Se acabó el tiempo para intentarlo de nuevo" in spanish.text
    assert await checkouts_of(runtime, intent_id) == 1
    assert (await read(client, sandbox, intent_id))["status"] == "FAILED"


async def test_a_press_after_the_end_before_the_job_starts_nothing(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox, intent_id, form = await one_offer(client, runtime)
    clock.advance(runtime.settings.checkout_ttl_seconds)
    pressed = await client.post(f"/checkout-retry/{intent_id}", data=form)
    assert pressed.status_code == 410 and ENDED in pressed.text
    assert await checkouts_of(runtime, intent_id) == 1
    await run_until_idle(ExpireCheckouts(), runtime)
    assert (await read(client, sandbox, intent_id))["status"] == "FAILED"
    assert len(failed_events(await events_of(runtime, intent_id))) == 1


async def test_a_press_in_time_keeps_the_intent_from_the_job(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox, intent_id, form = await one_offer(client, runtime)
    clock.advance(runtime.settings.checkout_ttl_seconds - 1)
    pressed = await client.post(f"/checkout-retry/{intent_id}", data=form)
    assert pressed.status_code == 303 and "/simulator/" in pressed.headers["location"]
    clock.advance(2)  # the offer's end: the buyer is at C's page with its own checkout
    await ExpireCheckouts().run_once(runtime)
    assert (await read(client, sandbox, intent_id))["status"] == "REQUIRES_ACTION"
    assert not failed_events(await events_of(runtime, intent_id))


async def test_a_press_racing_the_job_has_one_outcome(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    await opted_in(client, sandbox)
    ttl = runtime.settings.checkout_ttl_seconds
    outcomes = set()
    for round_ in range(6):
        intent_id, form = await offered(client, sandbox)
        clock.advance(ttl - 1)

        async def job(pause: float = round_ * 0.004) -> None:
            await asyncio.sleep(pause)
            clock.advance(1)  # the offer ends now: the press may or may not have read it open
            await ExpireCheckouts().run_once(runtime)

        pressed, _ = await asyncio.gather(client.post(f"/checkout-retry/{intent_id}", data=form), job())
        status = (await read(client, sandbox, intent_id))["status"]
        failed = len(failed_events(await events_of(runtime, intent_id)))
        count = await checkouts_of(runtime, intent_id)
        if pressed.status_code == 303:  # the press won: a checkout at C, the job left it alone
            assert (status, failed, count) == ("REQUIRES_ACTION", 0, 2), pressed.headers
        else:  # the job won: FAILED once, the press refused in words, nothing started
            assert pressed.status_code == 410 and ENDED in pressed.text, pressed.text
            assert (status, failed, count) == ("FAILED", 1, 1)
        outcomes.add(pressed.status_code)
        clock.advance(ttl)  # past this round's checkouts, so the next round starts afresh
        await run_until_idle(ExpireCheckouts(), runtime)
    assert outcomes <= {303, 410}
