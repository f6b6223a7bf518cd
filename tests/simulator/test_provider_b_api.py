"""Simulated provider B's API through HTTP: preferences, payments, search, refunds, cancel, auth."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest

from payorch.runtime import Runtime
from tests.kit import Sandbox, new_application
from tests.simulator.helpers import (
    B_PAGE,
    B,
    b_headers,
    create_b,
    pay_b,
    preference_body,
    query_of,
)


def flip_last(text: str) -> str:
    """The same text with its last character changed (never equal to the original)."""
    return text[:-1] + ("1" if text[-1] == "0" else "0")


PREF_ID = re.compile(r"^\d{9}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


async def _paid(
    http: httpx.AsyncClient, headers: dict[str, str], outcome: str = "approve", **overrides: Any
) -> int:
    preference = await create_b(http, headers, **overrides)
    back = await pay_b(http, preference["id"], outcome)
    assert back.status_code == 303, back.text
    return int(query_of(back)["payment_id"])


async def test_create_preference_answers_201_with_id_and_init_points(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    answer = await sim.post(
        B + "/checkout/preferences",
        json=preference_body(),
        headers=b_headers(runtime, sandbox.application_id),
    )
    assert answer.status_code == 201
    body = answer.json()
    assert PREF_ID.match(body["id"]) and body["id"].startswith(str(body["collector_id"]) + "-")
    assert body["init_point"] == f"http://testserver{B_PAGE}?pref_id={body['id']}"
    assert body["sandbox_init_point"] == body["init_point"]
    assert body["date_created"].endswith("Z") and body["external_reference"] == "payi_test"
    assert body["items"][0]["unit_price"] == 750 and body["auto_return"] == "all"
    read = await sim.get(
        f"{B}/checkout/preferences/{body['id']}", headers=b_headers(runtime, sandbox.application_id)
    )
    assert read.status_code == 200 and read.json() == body


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"items": []}, "items needed"),
        ({"items": None}, "items needed"),
        ({"items": [{"title": "x", "quantity": 0, "unit_price": 1}]}, "quantity invalid"),
        ({"items": [{"title": "x", "quantity": 1.5, "unit_price": 1}]}, "quantity invalid"),
        ({"items": [{"title": "x", "quantity": 1, "unit_price": -1}]}, "unit_price invalid"),
        ({"items": [{"title": "x", "quantity": 1, "unit_price": "1"}]}, "unit_price invalid"),
        (
            {"items": [{"title": "x", "quantity": 1, "unit_price": 1.5, "currency_id": "CLP"}]},
            "unit_price invalid",
        ),
        ({"items": [{"title": "", "quantity": 1, "unit_price": 1}]}, "title needed"),
        (
            {"items": [{"title": "x", "quantity": 1, "unit_price": 1, "currency_id": "XXX1"}]},
            "currency_id invalid",
        ),
        (
            {
                "items": [
                    {"title": "a", "quantity": 1, "unit_price": 1, "currency_id": "CLP"},
                    {"title": "b", "quantity": 1, "unit_price": 1, "currency_id": "USD"},
                ]
            },
            "currency_id must be the same for all items",
        ),
        ({"back_urls": {"success": "not a url"}}, "back_urls.success invalid"),
        ({"back_urls": {"elsewhere": "https://x.example"}}, "back_urls.elsewhere invalid"),
        (
            {"back_urls": {}, "auto_return": "approved"},
            "auto_return invalid. back_url.success must be defined",
        ),
        ({"auto_return": "sometimes"}, "auto_return invalid"),
        ({"external_reference": "r" * 257}, "external_reference invalid"),
        ({"external_reference": 12}, "external_reference invalid"),
        (
            {"notification_url": "javascript:alert(1)"},
            "notification_url attribute must be url valid",
        ),
        ({"expires": "yes"}, "expires invalid"),
        ({"expires": True, "expiration_date_to": "tomorrow"}, "expiration_date_to invalid"),
        (
            {
                "expires": True,
                "expiration_date_from": "2030-01-02T00:00:00Z",
                "expiration_date_to": "2030-01-01T00:00:00Z",
            },
            "expiration_date_to must not be before expiration_date_from",
        ),
    ],
)
async def test_preference_validation_answers_the_provider_error_body(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, change: dict[str, Any], message: str
) -> None:
    answer = await sim.post(
        B + "/checkout/preferences",
        json=preference_body(**change),
        headers=b_headers(runtime, sandbox.application_id),
    )
    assert answer.status_code == 400
    body = answer.json()
    assert body["message"] == message and body["status"] == 400 and isinstance(body["cause"], list)
    assert body["error"]


async def test_malformed_bodies_are_400(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = {**b_headers(runtime, sandbox.application_id), "Content-Type": "application/json"}
    for raw in (b"{oops", b"[]"):
        answer = await sim.post(B + "/checkout/preferences", content=raw, headers=headers)
        assert answer.status_code == 400 and answer.json()["error"] == "bad_request"


async def test_decimal_amounts_in_a_two_decimal_currency(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    items = [{"title": "Sneakers", "quantity": 3, "unit_price": 10.35, "currency_id": "USD"}]
    payment_id = await _paid(sim, headers, items=items)
    payment = (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()
    assert payment["transaction_amount"] == 31.05 and payment["currency_id"] == "USD"


async def test_bad_token_is_401_and_foreign_resources_are_404(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    payment_id = await _paid(sim, headers)
    preference = await create_b(sim, headers)
    for bad in (
        {},
        {"Authorization": "Bearer TEST-app_x-0123"},
        {"Authorization": flip_last(headers["Authorization"])},
    ):
        answer = await sim.get(f"{B}/v1/payments/{payment_id}", headers=bad)
        assert answer.status_code == 401
        assert answer.json() == {
            "message": "invalid access token",
            "error": "unauthorized",
            "status": 401,
            "cause": [],
        }
    other = b_headers(runtime, (await new_application(runtime)).application_id)
    for call in (
        sim.get(f"{B}/v1/payments/{payment_id}", headers=other),
        sim.post(f"{B}/v1/payments/{payment_id}/refunds", headers={**other, "X-Idempotency-Key": "k"}),
        sim.put(f"{B}/v1/payments/{payment_id}", json={"status": "cancelled"}, headers=other),
        sim.get(f"{B}/checkout/preferences/{preference['id']}", headers=other),
        sim.put(f"{B}/checkout/preferences/{preference['id']}", json={"expires": True}, headers=other),
        sim.get(f"{B}/v1/payments/abc", headers=headers),
        sim.get(f"{B}/v1/payments/123", headers=headers),
    ):
        answer = await call
        assert answer.status_code == 404 and answer.json()["error"] == "not_found"
    found = (
        await sim.get(f"{B}/v1/payments/search", params={"external_reference": "payi_test"}, headers=other)
    ).json()
    assert found["paging"]["total"] == 0


async def test_payment_fields(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    payment_id = await _paid(sim, headers)
    payment = (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()
    assert (
        payment["id"] == payment_id
        and payment["status"] == "approved"
        and payment["status_detail"] == "accredited"
    )
    assert payment["external_reference"] == "payi_test" and payment["transaction_amount"] == 1500
    assert payment["transaction_amount_refunded"] == 0 and payment["currency_id"] == "CLP"
    assert payment["date_approved"] and payment["date_created"] and len(payment["authorization_code"]) == 6


async def test_search_by_external_reference_sorted_and_paged(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    first = await _paid(sim, headers, "reject", reference="payi_s")
    second = await _paid(sim, headers, "approve", reference="payi_s")  # same preference kind, new one
    await _paid(sim, headers, reference="payi_other")
    params = {"external_reference": "payi_s", "sort": "date_created", "criteria": "desc"}
    found = (await sim.get(f"{B}/v1/payments/search", params=params, headers=headers)).json()
    assert found["paging"] == {"total": 2, "limit": 30, "offset": 0}
    assert {p["id"] for p in found["results"]} == {first, second}
    page = (
        await sim.get(f"{B}/v1/payments/search", params={**params, "limit": 1, "offset": 1}, headers=headers)
    ).json()
    assert page["paging"] == {"total": 2, "limit": 1, "offset": 1} and len(page["results"]) == 1
    approved = (
        await sim.get(f"{B}/v1/payments/search", params={**params, "status": "approved"}, headers=headers)
    ).json()
    assert [p["id"] for p in approved["results"]] == [second]
    for bad in ({"limit": 0}, {"limit": "x"}, {"criteria": "up"}, {"offset": -1}, {"id": "x"}):
        assert (await sim.get(f"{B}/v1/payments/search", params=bad, headers=headers)).status_code == 400


async def test_partial_then_full_refund(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    payment_id = await _paid(sim, headers)
    partial = await sim.post(
        f"{B}/v1/payments/{payment_id}/refunds",
        json={"amount": 500},
        headers={**headers, "X-Idempotency-Key": "r1"},
    )
    assert partial.status_code == 201
    assert partial.json()["amount"] == 500 and partial.json()["payment_id"] == payment_id
    assert partial.json()["status"] == "approved"
    payment = (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()
    assert (
        payment["status"],
        payment["status_detail"],
        payment["transaction_amount_refunded"],
    ) == (
        "approved",
        "partially_refunded",
        500,
    )
    rest = await sim.post(
        f"{B}/v1/payments/{payment_id}/refunds", headers={**headers, "X-Idempotency-Key": "r2"}
    )
    assert rest.status_code == 201 and rest.json()["amount"] == 1000
    payment = (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()
    assert (
        payment["status"],
        payment["status_detail"],
        payment["transaction_amount_refunded"],
    ) == (
        "refunded",
        "refunded",
        1500,
    )
    assert [r["amount"] for r in payment["refunds"]] == [500, 1000]
    again = await sim.post(
        f"{B}/v1/payments/{payment_id}/refunds", headers={**headers, "X-Idempotency-Key": "r3"}
    )
    assert again.status_code == 400
    listed = (await sim.get(f"{B}/v1/payments/{payment_id}/refunds", headers=headers)).json()
    assert [r["id"] for r in listed] == [partial.json()["id"], rest.json()["id"]]


async def test_same_idempotency_key_gives_the_same_refund_once(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    payment_id = await _paid(sim, headers)
    keyed = {**headers, "X-Idempotency-Key": "same"}
    answers = await asyncio.gather(
        *(
            sim.post(f"{B}/v1/payments/{payment_id}/refunds", json={"amount": 100}, headers=keyed)
            for _ in range(4)
        )
    )
    assert {a.status_code for a in answers} == {201}
    assert len({a.json()["id"] for a in answers}) == 1
    payment = (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()
    assert payment["transaction_amount_refunded"] == 100
    other = await _paid(sim, headers)
    reused = await sim.post(f"{B}/v1/payments/{other}/refunds", json={"amount": 100}, headers=keyed)
    assert reused.status_code == 409


async def test_refund_errors(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    payment_id = await _paid(sim, headers)
    url = f"{B}/v1/payments/{payment_id}/refunds"
    missing = await sim.post(url, json={"amount": 1}, headers=headers)
    assert missing.status_code == 400 and "X-Idempotency-Key" in missing.json()["message"]
    for n, amount in enumerate((1501, 0, -5, "10", 1.5)):
        answer = await sim.post(
            url, json={"amount": amount}, headers={**headers, "X-Idempotency-Key": f"e{n}"}
        )
        assert answer.status_code == 400, amount
    rejected = await _paid(sim, headers, "reject")
    answer = await sim.post(
        f"{B}/v1/payments/{rejected}/refunds", headers={**headers, "X-Idempotency-Key": "x"}
    )
    assert answer.status_code == 400 and "rejected" in answer.json()["message"]
    assert (await sim.get(f"{B}/v1/payments/{payment_id}", headers=headers)).json()[
        "transaction_amount_refunded"
    ] == 0


async def test_cancel_only_while_pending(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    pending = await _paid(sim, headers, "pending")
    assert (
        await sim.put(f"{B}/v1/payments/{pending}", json={"status": "approved"}, headers=headers)
    ).status_code == 400
    cancelled = await sim.put(f"{B}/v1/payments/{pending}", json={"status": "cancelled"}, headers=headers)
    assert cancelled.status_code == 200
    assert (cancelled.json()["status"], cancelled.json()["status_detail"]) == (
        "cancelled",
        "by_collector",
    )
    approved = await _paid(sim, headers)
    for payment_id in (pending, approved):
        answer = await sim.put(f"{B}/v1/payments/{payment_id}", json={"status": "cancelled"}, headers=headers)
        assert answer.status_code == 400
    assert (await sim.get(f"{B}/v1/payments/{approved}", headers=headers)).json()["status"] == "approved"


async def test_expiring_a_preference_by_put(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = b_headers(runtime, sandbox.application_id)
    preference = await create_b(sim, headers)
    answer = await sim.put(
        f"{B}/checkout/preferences/{preference['id']}",
        json={"expires": True, "expiration_date_to": "2000-01-01T00:00:00.000-04:00"},
        headers=headers,
    )
    assert answer.status_code == 200
    body = answer.json()
    assert body["expires"] is True and body["expiration_date_to"] == "2000-01-01T04:00:00.000Z"
    assert body["items"] == preference["items"] and body["external_reference"] == "payi_test"
    page = await sim.get(B_PAGE, params={"pref_id": preference["id"]})
    assert "expired" in page.text and 'value="approve"' not in page.text
    back = await pay_b(sim, preference["id"], "approve")  # a stale page still pressed
    assert query_of(back)["status"] == "null" and query_of(back)["payment_id"] == "null"
    found = (
        await sim.get(f"{B}/v1/payments/search", params={"external_reference": "payi_test"}, headers=headers)
    ).json()
    assert found["paging"]["total"] == 0
    invalid = await sim.put(
        f"{B}/checkout/preferences/{preference['id']}", json={"items": []}, headers=headers
    )
    assert invalid.status_code == 400


async def test_expiring_now_closes_the_checkout_at_once(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    from payorch.clock import isoformat

    headers = b_headers(runtime, sandbox.application_id)
    preference = await create_b(sim, headers)
    now = isoformat(runtime.clock.now())
    body = {"expires": True, "expiration_date_from": now, "expiration_date_to": now}
    answer = await sim.put(f"{B}/checkout/preferences/{preference['id']}", json=body, headers=headers)
    assert answer.status_code == 200
    page = await sim.get(B_PAGE, params={"pref_id": preference["id"]})
    assert "expired" in page.text and 'value="approve"' not in page.text
