"""A client generated from a live server's /openapi.json by openapi-python-client, used exactly
as generated: it configures a MOCK connector, creates a payment intent, requests its checkout,
and (after the buyer approves on the simulator's page) reads the intent AUTHORIZED, with its
timestamps parsed as datetimes and its statuses as the generated enums; the values that grow
(error codes, event types, providers) are strings it reads whatever their value.
Once per database (SQLite and PostgreSQL), like the other live-server tests."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from tests.client.buyer import pay
from tests.kit import Sandbox
from tests.live import live_server, payorch_env

pytestmark = pytest.mark.slow

GENERATOR = Path(sys.executable).with_name("openapi-python-client")


@pytest.fixture(scope="module")
def live_url(database_url: str) -> Iterator[str]:
    with live_server(payorch_env(database_url), "--no-worker") as url:
        yield url


@pytest.fixture
def generated(live_url: str, tmp_path: Path, backend: str) -> Iterator[ModuleType]:
    """The package generated into tmp_path, imported under a name of its own (one per backend:
    the SQLite run's modules must not stand in for the PostgreSQL run's)."""
    name = f"payorch_generated_{backend}"
    env = {**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(GENERATOR), "generate", "--url", f"{live_url}/openapi.json", "--meta", "none"]
        + ["--output-path", str(tmp_path / name)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "Warning" not in said and "error" not in said.lower(), said  # nothing skipped
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]


def part(package: ModuleType, path: str) -> ModuleType:
    return importlib.import_module(f"{package.__name__}.{path}")


def test_the_generated_client_drives_a_sandbox_payment(
    generated: ModuleType, live_url: str, sandbox: Sandbox
) -> None:
    models = part(generated, "models")
    create_connector = part(generated, "api.connectors.create_connector")
    create_payment_intent = part(generated, "api.payment_intents.create_payment_intent")
    get_payment_intent = part(generated, "api.payment_intents.get_payment_intent")
    request_checkout = part(generated, "api.checkout.request_checkout")

    with generated.AuthenticatedClient(base_url=live_url, token=sandbox.api_key) as client:
        connector = create_connector.sync(
            sandbox.merchant_account_id,
            client=client,
            body=models.CreateConnector(
                provider="provider_a_redirect_post", mode=models.CreateConnectorMode.MOCK
            ),
        )
        assert isinstance(connector, models.ConnectorResponse), connector

        created = create_payment_intent.sync(
            client=client,
            body=models.CreatePaymentIntent(
                merchant_account_id=sandbox.merchant_account_id,
                external_reference="generated-1",
                amount=1500,
                currency=models.CreatePaymentIntentCurrency.CLP,
                return_url="https://shop.example/return",
            ),
            idempotency_key="generated-1",
        )
        assert isinstance(created, models.PaymentIntentResponse), created
        assert created.status is models.IntentStatus.CREATED
        assert isinstance(created.created_at, datetime) and created.created_at.tzinfo is not None

        checkout = request_checkout.sync(created.id, client=client)
        assert isinstance(checkout, models.CheckoutResponse), checkout
        assert checkout.status is models.IntentStatus.REQUIRES_ACTION
        assert isinstance(checkout.expires_at, datetime)

        action = checkout.checkout  # what the shop hands the buyer's browser
        returned = pay(
            SimpleNamespace(  # type: ignore[arg-type]
                checkout=SimpleNamespace(
                    method=action.method.value, url=action.url, fields=action.fields.to_dict()
                )
            )
        )
        assert returned["payment_intent_id"] == [created.id]

        intent = get_payment_intent.sync(created.id, client=client)
        assert isinstance(intent, models.PaymentIntentResponse), intent
        assert intent.status is models.IntentStatus.AUTHORIZED
        assert intent.payment.status is models.IntentPaymentResponseStatus.AUTHORIZED
        assert isinstance(intent.payment.authorized_at, datetime)
        assert [entry.type_ for entry in intent.timeline][-1] == "payment.authorized"

        unknown = get_payment_intent.sync("payi_unknown", client=client)
        assert isinstance(unknown, models.ErrorEnvelope), unknown
        assert unknown.error.code == "RESOURCE_NOT_FOUND"

        # Values that grow are open strings: the generated models read a code, an event type or
        # a provider they do not know (a newer payorch) instead of failing.
        newer = intent.to_dict()
        newer["provider"] = "provider_z_redirect_get"
        newer["timeline"][-1]["type"] = "payment.something_new"
        newer["last_payment_error"] = {
            "code": "a_new_code",
            "message": "m",
            "provider": "provider_z_redirect_get",
            "provider_code": None,
            "provider_message": None,
            "at": "2026-11-28T03:58:51.000Z",
        }
        read = models.PaymentIntentResponse.from_dict(newer)
        assert read.last_payment_error.code == "a_new_code"
        assert read.timeline[-1].type_ == "payment.something_new"
        assert (
            models.ErrorEnvelope.from_dict(
                {"error": {"code": "A_NEW_CODE", "message": "m", "request_id": "r", "details": {}}}
            ).error.code
            == "A_NEW_CODE"
        )
