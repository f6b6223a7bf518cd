"""Routing under faults: failover within one request, 503 retryable with the same key, skipping
after repeated failures, the trial call, an explicit skipped provider; SQLite and PostgreSQL."""

from __future__ import annotations

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.providers.registry import REGISTRATIONS
from payorch.runtime import Runtime
from tests.databases import own_database
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import A, B, checkout, create_intent, pay, read, set_fault

database_url = own_database  # reconciliation sweeps the database: this module gets its own


pytestmark = pytest.mark.settings(provider_failure_threshold=3, provider_skip_seconds=10)
# A test that sits out the simulator's `timeout` fault (its answer comes after
# provider_timeout_seconds + 1) waits 1.5 s; the others keep the default 10 s: an ordinary
# in-process call on a loaded two-core machine took over 1.5 s once (a fresh-clone run at load 8-15).
WAITS_OUT_THE_TIMEOUT = pytest.mark.settings(
    provider_timeout_seconds=1.5, provider_failure_threshold=3, provider_skip_seconds=10
)


async def others_down(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    """Every registered provider but A and B fails: "none available" means none of them."""
    for registration in REGISTRATIONS:
        if A != registration.provider_id != B:
            await set_fault(client, sandbox, registration.provider_id, "error")


async def provider_of_new_checkout(client: httpx.AsyncClient, sandbox, provider: str | None = None) -> str:  # type: ignore[no-untyped-def]
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"], provider)
    assert response.status_code == 200, response.text
    return str(response.json()["provider"])


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@WAITS_OUT_THE_TIMEOUT
@pytest.mark.parametrize("fault", ["error", "timeout"])
async def test_auto_fails_over_to_the_next_provider(
    client: httpx.AsyncClient, runtime: Runtime, fault: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, fault)
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"], key="k")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["provider"] == B
    await pay(client, body, "approve")
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED" and read_back["provider"] == B


async def test_503_when_none_is_available_then_retry_with_the_same_key(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, "error")
    await set_fault(client, sandbox, B, "error")
    await others_down(client, sandbox)
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"], key="retry-me")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "CONNECTOR_UNAVAILABLE" and error["request_id"]
    assert (
        isinstance(error["details"]["retry_after_seconds"], int)
        and error["details"]["retry_after_seconds"] >= 1
    )
    assert response.headers["retry-after"] == str(error["details"]["retry_after_seconds"])
    assert (await read(client, sandbox, intent["id"]))["status"] == "CREATED"
    await set_fault(client, sandbox, B, "ok")
    again = await checkout(client, sandbox, intent["id"], key="retry-me")
    assert again.status_code == 200, again.text
    assert again.json()["provider"] == B and "idempotent-replayed" not in again.headers


async def test_skipped_after_threshold_then_one_trial(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, "error")
    for _ in range(3):  # three consecutive failures of A, each failing over to B
        assert await provider_of_new_checkout(client, sandbox) == B
    await set_fault(client, sandbox, A, "ok")
    # A is healthy again, but skipped for 10 seconds: auto goes straight to B.
    assert await provider_of_new_checkout(client, sandbox) == B
    clock.advance(9)
    assert await provider_of_new_checkout(client, sandbox) == B
    clock.advance(2)
    assert await provider_of_new_checkout(client, sandbox) == A  # the trial call succeeded
    assert await provider_of_new_checkout(client, sandbox) == A


async def test_explicit_provider_is_used_even_when_skipped(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, "error")
    for _ in range(3):
        assert await provider_of_new_checkout(client, sandbox) == B
    # Explicitly A while it is down: no failover to another provider, a 503.
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"], A)
    assert response.status_code == 503 and response.json()["error"]["code"] == "CONNECTOR_UNAVAILABLE"
    message = response.json()["error"]["message"]
    assert message.startswith(f"The requested provider is unavailable: {A} is down ("), message
    assert message.endswith(
        "No other provider is tried when one is named; retry later, or request the checkout "
        'with "provider": "auto".'
    )
    await set_fault(client, sandbox, A, "ok")
    assert await provider_of_new_checkout(client, sandbox) == B  # auto still skips A
    assert await provider_of_new_checkout(client, sandbox, A) == A  # explicit: used while enabled


async def test_skipped_provider_and_the_other_down_is_503_with_the_wait(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, "error")
    for _ in range(3):
        await provider_of_new_checkout(client, sandbox)
    await set_fault(client, sandbox, B, "error")
    await others_down(client, sandbox)
    clock.advance(4)
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"])
    assert response.status_code == 503
    assert response.json()["error"]["details"]["retry_after_seconds"] == 1  # B may work on a retry
    message = response.json()["error"]["message"]
    assert message.startswith(
        f"No provider of the merchant is available: {A} is skipped after repeated failures "
        f"(next try in 6 s); {B} is down ("
    ), message
    for _ in range(2):  # B's second and third failures: now both are skipped
        assert (await checkout(client, sandbox, intent["id"])).status_code == 503
    clock.advance(1)
    response = await checkout(client, sandbox, intent["id"])
    assert response.status_code == 503
    assert response.json()["error"]["details"]["retry_after_seconds"] == 5  # A's trial comes first


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@WAITS_OUT_THE_TIMEOUT
async def test_a_commit_that_times_out_leaves_processing_then_reconciles(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    from payorch.checkouts.reconcile_processing import ReconcileProcessing
    from tests.checkouts.helpers import run_until_idle
    from tests.providers.helpers import choose_without_returning, query_of, start

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, A)
    location = await choose_without_returning(client, body, "approve")
    await set_fault(client, sandbox, A, "timeout")
    response = await client.get(location)  # the commit gets no answer within the timeout
    assert response.status_code == 303
    assert query_of(response.headers["location"])["payment_intent_id"] == intent["id"]
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    await set_fault(client, sandbox, A, "ok")
    clock.advance(16)
    await run_until_idle(ReconcileProcessing(), runtime)
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
