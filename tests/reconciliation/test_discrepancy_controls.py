"""Each discrepancy made through the simulator's control (POST /simulator/controls/discrepancies)
is found by reconciling the day, through HTTP on SQLite and PostgreSQL: a refund done at the
provider, an approval with no return and no notice, an amount or a currency changed, an orphan
payment. Bad requests are refused in the error shape and change nothing."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema_rs
import pytest

from payorch.clock import FrozenClock
from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.registry import REGISTRATIONS
from payorch.runtime import Runtime
from payorch.simulator.jobs import DeliverSimulatorNotifications
from payorch.simulator.registry import SIMULATED
from tests.databases import own_database
from tests.kit import chosen_providers, mock_sandbox, new_application
from tests.providers.helpers import A, B, events_of, read, start
from tests.reconciliation.helpers import C, discrepancy, kinds, made, paid, reconcile, types

# Every provider payorch reconciles (one without a reader: test_not_reconciled.py).
EVERY = pytest.mark.parametrize(
    "provider", [r.provider_id for r in REGISTRATIONS if r.reconciliation is not None]
)
# What the discrepancy control can make at each provider (SimulatedProvider.discrepancies).
ORPHANS = [s.provider_id for s in SIMULATED if s.discrepancies.orphan is not None]
CURRENCY_CHANGED = chosen_providers(
    B,
    C,
    left_out={
        A: "it charges CLP only: its control refuses another currency",
        PROVIDER_D: "no reconciliation reader: a changed currency is never read (test_not_reconciled.py)",
    },
)
NOTIFYING = [r.provider_id for r in REGISTRATIONS if r.notifications is not None]
# The simulator's notification job sweeps the whole database: this module gets its own, so no
# other module's notifications are due when a test here advances the clock.
database_url = own_database


@EVERY
async def test_a_refund_done_at_the_provider_is_found_and_flagged(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, provider, 3000)
    await made(
        client,
        sandbox,
        provider=provider,
        kind="refunded_at_provider",
        payment_intent_id=intent["id"],
        amount=1000,
    )
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(provider, "refunded_outside", "FLAGGED")]
    [finding] = body["findings"]
    assert (finding["payorch"]["refunded"], finding["at_provider"]["refunded"]) == (0, 1000)
    assert finding["payment_intent_id"] == intent["id"]


@EVERY
async def test_an_approval_with_no_return_and_no_notice_is_found_and_applied_once(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, _ = await start(client, sandbox, provider, amount=2000)
    answer = await made(
        client, sandbox, provider=provider, kind="approved_unreturned", payment_intent_id=intent["id"]
    )
    assert answer["references"]
    # No return, no notice: payorch still waits.
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(provider, "approved_not_recorded", "APPLIED")]
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    await reconcile(client, sandbox, runtime)
    emitted = types(await events_of(runtime, intent["id"]))
    assert emitted.count("payment.authorized") == 1 and emitted.count("reconciliation.discrepancy") == 1


@EVERY
async def test_an_amount_changed_at_the_provider_is_a_mismatch_with_both_sides(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, provider, 1500)
    await made(
        client, sandbox, provider=provider, kind="amount_changed", payment_intent_id=intent["id"], amount=1400
    )
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(provider, "amount_mismatch", "FLAGGED")]
    [finding] = body["findings"]
    assert (finding["payorch"]["amount"], finding["at_provider"]["amount"]) == (1500, 1400)
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"  # nothing guessed


@pytest.mark.parametrize("provider", CURRENCY_CHANGED)
async def test_a_currency_changed_at_the_provider_is_a_mismatch(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, provider, 1500)
    await made(
        client,
        sandbox,
        provider=provider,
        kind="amount_changed",
        payment_intent_id=intent["id"],
        currency="USD",
    )
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(provider, "amount_mismatch", "FLAGGED")]
    [finding] = body["findings"]
    assert (finding["payorch"]["currency"], finding["at_provider"]["currency"]) == ("CLP", "USD")


@pytest.mark.parametrize("provider", ORPHANS)
async def test_an_orphan_payment_is_found_and_flagged(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    await paid(client, sandbox, provider, 1000)
    await made(client, sandbox, provider=provider, kind="orphan", amount=4200, currency="CLP")
    body = await reconcile(client, sandbox, runtime)
    assert kinds(body) == [(provider, "approved_not_recorded", "FLAGGED")]
    [finding] = body["findings"]
    assert finding["payment_intent_id"] is None and finding["payorch"] == {"known": False}
    assert finding["at_provider"]["amount"] == 4200


@pytest.mark.parametrize("provider", NOTIFYING)
async def test_an_unreturned_approval_sends_no_notice_even_when_the_simulator_resends(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, _ = await start(client, sandbox, provider)
    await made(client, sandbox, provider=provider, kind="approved_unreturned", payment_intent_id=intent["id"])
    clock.advance(3600)  # every notification the provider wrote is long due
    assert await DeliverSimulatorNotifications().run_once(runtime) == 0
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"


async def test_a_production_application_may_not_use_the_control(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    production = await new_application(runtime, environment="PRODUCTION")
    answer = await discrepancy(client, production, provider=B, kind="orphan", amount=100)
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "FORBIDDEN", answer.text


async def test_bad_requests_are_refused_and_change_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, A, 1500)
    refused: list[tuple[dict[str, Any], int]] = [
        ({"provider": A, "kind": "orphan", "amount": 100}, 400),  # A's reader cannot see one
        ({"provider": B, "kind": "refunded_at_provider"}, 400),  # no intent
        ({"provider": B, "kind": "orphan", "payment_intent_id": intent["id"], "amount": 1}, 400),
        (
            {"provider": A, "kind": "amount_changed", "payment_intent_id": intent["id"]},
            400,
        ),  # nothing to change
        (
            {"provider": A, "kind": "amount_changed", "payment_intent_id": intent["id"], "currency": "USD"},
            400,
        ),
        (
            {
                "provider": A,
                "kind": "refunded_at_provider",
                "payment_intent_id": intent["id"],
                "amount": 9999,
            },
            400,
        ),
        ({"provider": "provider_z", "kind": "orphan", "amount": 1}, 400),
        (
            {"provider": B, "kind": "refunded_at_provider", "payment_intent_id": intent["id"]},
            404,
        ),  # paid at A
        ({"provider": A, "kind": "approved_unreturned", "payment_intent_id": intent["id"]}, 404),  # none open
    ]
    for body, status in refused:
        answer = await discrepancy(client, sandbox, **body)
        assert answer.status_code == status, (body, answer.text)
        assert answer.json()["error"]["code"] in ("VALIDATION_ERROR", "RESOURCE_NOT_FOUND"), answer.text
    body = await reconcile(client, sandbox, runtime)
    assert body["findings"] == []


async def test_the_document_states_each_kinds_fields(client: httpx.AsyncClient) -> None:
    # What the request's model refuses, the document's schema refuses too (so a body the
    # document allows is not a 400 for its shape): an orphan with an intent, at A, in a currency
    # its provider does not take; a kind without the fields it needs.
    document = (await client.get("/openapi.json")).json()
    schema = {**document, "$ref": "#/components/schemas/DiscrepancyRequest"}
    validator = jsonschema_rs.Draft202012Validator(schema)
    for body in (
        {"provider": B, "kind": "orphan", "payment_intent_id": "payi_1", "amount": 1},
        {"provider": A, "kind": "orphan", "amount": 100},
        {"provider": B, "kind": "orphan", "amount": 100, "currency": "EUR"},
        {"provider": B, "kind": "orphan"},
        {"provider": B, "kind": "refunded_at_provider"},
        {"provider": B, "kind": "amount_changed", "payment_intent_id": "payi_1"},
        {"provider": B, "kind": "approved_unreturned", "payment_intent_id": "payi_1", "amount": 5},
    ):
        assert not validator.is_valid(body), body
    for body in (
        {"provider": B, "kind": "orphan", "amount": 100},
        {"provider": "provider_c", "kind": "orphan", "amount": 100, "currency": "EUR"},
        {"provider": A, "kind": "refunded_at_provider", "payment_intent_id": "payi_1"},
        {"provider": A, "kind": "amount_changed", "payment_intent_id": "payi_1", "amount": 5},
    ):
        assert validator.is_valid(body), body


async def test_an_orphan_in_a_currency_its_provider_does_not_take_is_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    answer = await discrepancy(client, sandbox, provider=B, kind="orphan", amount=100, currency="EUR")
    assert answer.status_code == 400, answer.text
    assert "ARS, BRL, CLP" in answer.json()["error"]["details"]["errors"][0]["message"]
