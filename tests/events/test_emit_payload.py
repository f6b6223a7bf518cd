"""events.service.emit_payload and the document's ``webhooks`` section, on SQLite and PostgreSQL:
a model is written as its own type's event, an optional field left None is absent (never null),
and /openapi.json (OpenAPI 3.1) lists every event of the catalogue with its envelope."""

from __future__ import annotations

import httpx

from payorch.events import service as events
from payorch.events.catalogue import CATALOGUE, PaymentExpired, ReconciliationDiscrepancy
from payorch.reconciliation.records import FindingAction, FindingKind
from payorch.runtime import Runtime
from tests.kit import Sandbox


async def test_an_optional_field_left_none_is_absent(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    unknown_intent = ReconciliationDiscrepancy(
        finding_id="rcf_1",
        date="2026-11-27",
        provider="provider_b_redirect_get",
        kind=FindingKind.APPROVED_NOT_RECORDED,
        action=FindingAction.FLAGGED,
        provider_reference="123",
        payorch={},
        at_provider={"amount": 1500},
    )
    expired = PaymentExpired(
        payment_intent_id="payi_x", external_reference="o", metadata={}, last_payment_error=None
    )
    async with runtime.database.transaction() as conn:
        for payload in (unknown_intent, expired):
            await events.emit_payload(
                conn, application_id=sandbox.application_id, payload=payload, at=runtime.clock.now()
            )
    listed = (await client.get("/v1/events", headers=sandbox.headers)).json()["items"]
    assert [(e["type"], e["data"]) for e in listed] == [
        ("payment.expired", {"payment_intent_id": "payi_x", "external_reference": "o", "metadata": {}}),
        (
            "reconciliation.discrepancy",
            {
                "finding_id": "rcf_1",
                "date": "2026-11-27",
                "provider": "provider_b_redirect_get",
                "kind": "approved_not_recorded",
                "action": "FLAGGED",
                "provider_reference": "123",
                "payorch": {},
                "at_provider": {"amount": 1500},
            },
        ),
    ]


async def test_the_document_lists_every_event_in_webhooks(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    assert document["openapi"].startswith("3.1")
    assert list(document["webhooks"]) == list(CATALOGUE)
    schemas = document["components"]["schemas"]
    for event_type, model in CATALOGUE.items():
        operation = document["webhooks"][event_type]["post"]
        envelope = schemas[f"{model.__name__}Event"]
        assert operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
            f"/{model.__name__}Event"
        )
        assert envelope["properties"]["type"]["const"] == event_type
        assert envelope["properties"]["data"]["$ref"].endswith(f"/{model.__name__}")
        payload = schemas[model.__name__]
        assert payload["additionalProperties"] is False
        assert set(payload["properties"]) == set(model.model_fields)
