"""The providers' official Python SDKs, unchanged, against the simulator on a live server.

A real uvicorn process serves the app on 127.0.0.1 (random free port, its own SQLite database);
the SDKs talk to it over TCP, with the hand-style credentials docs/simulator.md prints (written
out here as a developer would copy them, not derived inside the service). Only their base URL is redirected: transbank-sdk has no setting
for it (its host is hard-coded per integration type), so ``RequestService.host`` is patched;
mercadopago accepts a custom ``HttpClient``, which rewrites its fixed https://api.mercadopago.com.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import mercadopago
import pytest
from mercadopago.http import HttpClient
from transbank.common.integration_type import IntegrationType
from transbank.common.options import WebpayOptions
from transbank.common.request_service import RequestService
from transbank.error.transaction_capture_error import TransactionCaptureError
from transbank.error.transaction_commit_error import TransactionCommitError
from transbank.error.transaction_create_error import TransactionCreateError
from transbank.error.transaction_refund_error import TransactionRefundError
from transbank.error.transaction_status_error import TransactionStatusError
from transbank.webpay.webpay_plus.transaction import Transaction

from payorch.crypto import Cipher
from payorch.providers.provider_a.registration import mock_deferred_credentials
from payorch.simulator.credentials import mock_credentials
from tests.live import START_SECONDS
from tests.simulator.helpers import free_port

pytestmark = pytest.mark.slow

SECRET = "sdk-test-secret-key-0123456789abcdefghij"  # noqa: S105 - a test key
MP_HOST = "https://api.mercadopago.com"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "simulator.md"

# As docs/simulator.md ("Credentials") prints them.
A_COMMERCE_CODE = "597055555532"
A_DEFERRED_COMMERCE_CODE = "597055555540"
A_API_KEY = "579B532A7440BB0C9079DED94D31EA1615BACEB56610332264630D42D0A36B1C"
B_ACCESS_TOKEN = "TEST-0000000000000000-000000-payorchsandboxpublictesttoken-0"  # noqa: S105


def test_the_hand_style_credentials_are_the_documented_ones() -> None:
    text = DOCS.read_text()
    for value in (A_COMMERCE_CODE, A_DEFERRED_COMMERCE_CODE, A_API_KEY, B_ACCESS_TOKEN):
        assert f"`{value}`" in text


@dataclass
class Server:
    url: str
    application_id: str
    api_key: str


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    db = tmp_path_factory.mktemp("sdk") / "sdk.db"
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
        "PAYORCH_DATABASE_URL": f"sqlite:///{db}",
        "PAYORCH_SECRET_KEY": SECRET,
        "PAYORCH_PUBLIC_URL": url,
    }
    subprocess.run([sys.executable, "-m", "payorch.cli", "migrate"], env=env, check=True, capture_output=True)
    created = subprocess.run(
        [
            sys.executable,
            "-m",
            "payorch.cli",
            "applications",
            "create",
            "--name",
            "sdk",
            "--environment",
            "SANDBOX",
            "--merchant-name",
            "SDK shop",
            "--json",
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    app = json.loads(created.stdout.strip().splitlines()[-1])
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "payorch.composition:serve_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                httpx.get(url + "/simulator/provider_b/checkout/v1/redirect", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "uvicorn did not start: " + process.stderr.read().decode()[-2000:]
                    ) from None
                time.sleep(0.2)
        yield Server(url, app["application_id"], app["api_key"])
    finally:
        process.terminate()
        process.wait(timeout=10)


# ----- provider A: transbank-sdk -----------------------------------------------------------------


@pytest.fixture
def webpay(server: Server, monkeypatch: pytest.MonkeyPatch) -> Transaction:
    base = server.url + "/simulator/provider_a"
    monkeypatch.setattr(RequestService, "host", classmethod(lambda cls, options: base))
    return Transaction(WebpayOptions(A_COMMERCE_CODE, A_API_KEY, IntegrationType.TEST))


def _buyer_chooses_a(url: str, token: str, outcome: str) -> httpx.Response:
    """What a browser does: POST token_ws to the page, then press a button."""
    page = httpx.post(url, data={"token_ws": token})
    assert page.status_code == 200 and f'value="{outcome}"' in page.text
    return httpx.post(url.rsplit("/", 1)[0] + "/decide", data={"token_ws": token, "outcome": outcome})


def test_transbank_sdk_create_commit_status_refund(webpay: Transaction) -> None:
    created = webpay.create("sdk-order-1", "session-1", 2500, "https://shop.example/return")
    assert len(created["token"]) == 64 and created["url"].endswith("/webpayserver/initTransaction")
    back = _buyer_chooses_a(created["url"], created["token"], "approve")
    assert back.status_code == 303
    assert back.headers["location"] == f"https://shop.example/return?token_ws={created['token']}"

    committed = webpay.commit(created["token"])
    assert committed["status"] == "AUTHORIZED" and committed["response_code"] == 0
    assert committed["amount"] == 2500 and committed["buy_order"] == "sdk-order-1"
    assert len(committed["card_detail"]["card_number"]) == 4
    with pytest.raises(TransactionCommitError) as second:
        webpay.commit(created["token"])
    assert second.value.code == 422

    assert webpay.status(created["token"])["status"] == "AUTHORIZED"
    refund = webpay.refund(created["token"], 1000)
    assert refund["type"] == "NULLIFIED" and refund["balance"] == 1500 and refund["nullified_amount"] == 1000
    assert webpay.status(created["token"])["status"] == "PARTIALLY_NULLIFIED"
    with pytest.raises(TransactionRefundError) as too_much:
        webpay.refund(created["token"], 5000)
    assert too_much.value.code == 422


def test_transbank_sdk_full_refund_is_a_reversal_and_errors_are_typed(webpay: Transaction) -> None:
    created = webpay.create("sdk-order-2", "session-2", 990, "https://shop.example/return")
    _buyer_chooses_a(created["url"], created["token"], "approve")
    webpay.commit(created["token"])
    assert webpay.refund(created["token"], 990) == {"type": "REVERSED"}

    aborted = webpay.create("sdk-order-3", "session-3", 990, "https://shop.example/return")
    _buyer_chooses_a(aborted["url"], aborted["token"], "cancel")
    with pytest.raises(TransactionCommitError) as error:
        webpay.commit(aborted["token"])
    assert error.value.code == 422 and "aborted" in error.value.message
    with pytest.raises(TransactionStatusError) as unknown:
        webpay.status("0" * 64)
    assert unknown.value.code == 404
    with pytest.raises(TransactionCreateError) as invalid:
        webpay.create("bad order*", "s", 10, "https://shop.example/return")
    assert invalid.value.code == 422


def test_transbank_sdk_with_mock_credentials_and_a_bad_key(server: Server, webpay: Transaction) -> None:
    creds = mock_credentials(Cipher([SECRET]), "provider_a", server.application_id)
    own = Transaction(WebpayOptions(creds["commerce_code"], creds["api_key"], IntegrationType.TEST))
    created = own.create("sdk-order-4", "s", 1500, "https://shop.example/return")
    page = httpx.post(created["url"], data={"token_ws": created["token"]})
    assert "SDK shop" in page.text and "$1.500" in page.text
    with pytest.raises(TransactionStatusError) as foreign:  # the public owner cannot see it
        webpay.status(created["token"])
    assert foreign.value.code == 404
    bad = Transaction(WebpayOptions(creds["commerce_code"], "0" * 64, IntegrationType.TEST))
    with pytest.raises(TransactionCreateError) as denied:
        bad.create("sdk-order-5", "s", 1500, "https://shop.example/return")
    assert denied.value.code == 401


def _committed(webpay: Transaction, order: str, amount: int) -> dict[str, Any]:
    created = webpay.create(order, "session-hold", amount, "https://shop.example/return")
    _buyer_chooses_a(created["url"], created["token"], "approve")
    return {**webpay.commit(created["token"]), "token": created["token"]}


def test_transbank_sdk_deferred_capture_with_the_deferred_integration_code(webpay: Transaction) -> None:
    deferred = Transaction(WebpayOptions(A_DEFERRED_COMMERCE_CODE, A_API_KEY, IntegrationType.TEST))
    held = _committed(deferred, "sdk-hold-1", 2500)
    assert (held["status"], held["response_code"]) == ("AUTHORIZED", 0)
    with pytest.raises(TransactionCaptureError) as too_much:
        deferred.capture(held["token"], "sdk-hold-1", held["authorization_code"], 2501)
    assert too_much.value.code == 422
    captured = deferred.capture(held["token"], "sdk-hold-1", held["authorization_code"], 1500)
    assert (captured["captured_amount"], captured["response_code"]) == (1500, 0)
    assert captured["authorization_code"] == held["authorization_code"] and captured["authorization_date"]
    status = deferred.status(held["token"])
    assert (status["status"], status["balance"]) == ("CAPTURED", 1500)
    with pytest.raises(TransactionCaptureError) as again:
        deferred.capture(held["token"], "sdk-hold-1", held["authorization_code"], 1000)
    assert again.value.code == 422 and "already captured" in again.value.message

    immediate = _committed(webpay, "sdk-hold-2", 900)
    with pytest.raises(TransactionCaptureError) as refused:
        webpay.capture(immediate["token"], "sdk-hold-2", immediate["authorization_code"], 900)
    assert refused.value.code == 422 and "deferred" in refused.value.message


def test_transbank_sdk_a_hold_lapses_when_the_clock_control_moves_past_its_window(
    server: Server, webpay: Transaction
) -> None:
    creds = mock_deferred_credentials(Cipher([SECRET]), server.application_id)
    own = Transaction(WebpayOptions(creds["commerce_code"], creds["api_key"], IntegrationType.TEST))
    held = _committed(own, "sdk-hold-3", 3000)
    moved = httpx.post(
        server.url + "/simulator/controls/clock",
        json={"advance_seconds": 7 * 86400, "provider": "provider_a"},
        headers={"Authorization": f"Bearer {server.api_key}"},
    )
    assert moved.status_code == 200 and moved.json()["lapsed"][0]["references"] == [held["token"]]
    with pytest.raises(TransactionCaptureError) as lapsed:
        own.capture(held["token"], "sdk-hold-3", held["authorization_code"], 3000)
    assert lapsed.value.code == 422 and "expired" in lapsed.value.message
    assert own.status(held["token"])["status"] == "REVERSED"


# ----- provider B: mercadopago -------------------------------------------------------------------


class SimulatorHttpClient(HttpClient):  # type: ignore[misc]
    """The SDK's own client, with its fixed API host replaced by the simulator's base URL."""

    def __init__(self, base: str) -> None:
        self.base = base

    def request(self, method, url, maxretries=None, retry_on=None, backoff_factor=None, **kwargs):  # type: ignore[no-untyped-def]
        assert url.startswith(MP_HOST)
        return super().request(
            method, self.base + url[len(MP_HOST) :], maxretries, retry_on, backoff_factor, **kwargs
        )


def _mp(server: Server, token: str) -> mercadopago.SDK:
    return mercadopago.SDK(token, http_client=SimulatorHttpClient(server.url + "/simulator/provider_b"))


def _buyer_pays_b(server: Server, preference_id: str, outcome: str) -> int:
    """What a browser does on the checkout page; the payment id it comes back with."""
    back = httpx.post(
        server.url + "/simulator/provider_b/checkout/v1/redirect",
        data={"pref_id": preference_id, "outcome": outcome},
    )
    return int(httpx.URL(back.headers["location"]).params["payment_id"])


@pytest.fixture
def mp(server: Server) -> mercadopago.SDK:
    return _mp(server, B_ACCESS_TOKEN)


def test_mercadopago_sdk_preference_payment_search_refund(server: Server, mp: mercadopago.SDK) -> None:
    reference = f"sdk-{time.monotonic_ns()}"
    created = mp.preference().create(
        {
            "items": [
                {
                    "id": "sku-1",
                    "title": "Mug",
                    "quantity": 2,
                    "unit_price": 4990,
                    "currency_id": "CLP",
                }
            ],
            "back_urls": {
                "success": "https://shop.example/ok",
                "failure": "https://shop.example/ko",
                "pending": "https://shop.example/wait",
            },
            "auto_return": "approved",
            "external_reference": reference,
        }
    )
    assert created["status"] == 201, created
    preference = created["response"]
    assert preference["init_point"].startswith(server.url) and preference["id"].count("-") == 5
    assert mp.preference().get(preference["id"])["response"]["external_reference"] == reference

    page = httpx.get(preference["init_point"])
    assert page.status_code == 200 and "$9.980" in page.text
    back = httpx.post(page.url, data={"pref_id": preference["id"], "outcome": "approve"})
    assert back.status_code == 303 and back.headers["location"].startswith("https://shop.example/ok?")
    payment_id = int(httpx.URL(back.headers["location"]).params["payment_id"])

    payment = mp.payment().get(payment_id)
    assert payment["status"] == 200
    assert payment["response"]["status"] == "approved"
    assert payment["response"]["transaction_amount"] == 9980
    found = mp.payment().search({"external_reference": reference, "sort": "date_created", "criteria": "desc"})
    assert found["status"] == 200 and found["response"]["paging"]["total"] == 1
    assert found["response"]["results"][0]["id"] == payment_id

    partial = mp.refund().create(payment_id, {"amount": 1000})
    assert partial["status"] == 201 and partial["response"]["amount"] == 1000
    after = mp.payment().get(payment_id)["response"]
    assert (after["status"], after["status_detail"]) == ("approved", "partially_refunded")
    rest = mp.refund().create(payment_id)
    assert rest["status"] == 201 and rest["response"]["amount"] == 8980
    assert mp.payment().get(payment_id)["response"]["status"] == "refunded"
    assert len(mp.refund().list_all(payment_id)["response"]) == 2


def test_mercadopago_sdk_cancel_pending_and_errors(server: Server, mp: mercadopago.SDK) -> None:
    preference = mp.preference().create(
        {
            "items": [{"title": "Ticket", "quantity": 1, "unit_price": 1500}],
            "back_urls": {"pending": "https://shop.example/wait"},
            "external_reference": "sdk-pending",
        }
    )["response"]
    payment_id = _buyer_pays_b(server, preference["id"], "pending")
    cancelled = mp.payment().update(payment_id, {"status": "cancelled"})
    assert cancelled["status"] == 200 and cancelled["response"]["status"] == "cancelled"
    assert mp.payment().update(payment_id, {"status": "cancelled"})["status"] == 400
    assert mp.payment().get(999)["status"] == 404
    invalid = mp.preference().create({"items": []})
    assert invalid["status"] == 400 and invalid["response"]["message"] == "items needed"
    expired = mp.preference().update(
        preference["id"], {"expires": True, "expiration_date_to": "2020-01-01T00:00:00Z"}
    )
    assert expired["status"] == 200 and expired["response"]["expires"] is True
    denied = mercadopago.SDK(
        "TEST-nobody-123", http_client=SimulatorHttpClient(server.url + "/simulator/provider_b")
    )
    assert denied.payment().get(payment_id)["status"] == 401


def test_mercadopago_sdk_public_token_and_an_applications_token_never_see_each_other(
    server: Server, mp: mercadopago.SDK
) -> None:
    """Scoping stays: the public owner's payments are not an application's, and back."""
    own = _mp(
        server,
        mock_credentials(Cipher([SECRET]), "provider_b", server.application_id)["access_token"],
    )
    ids = []
    for sdk in (mp, own):
        preference = sdk.preference().create(
            {
                "items": [{"title": "Pen", "quantity": 1, "unit_price": 700}],
                "back_urls": {"success": "https://shop.example/ok"},
                "external_reference": "sdk-scope",
            }
        )["response"]
        ids.append(_buyer_pays_b(server, preference["id"], "approve"))
        assert sdk.payment().get(ids[-1])["status"] == 200
    public_id, own_id = ids
    assert mp.payment().get(own_id)["status"] == 404
    assert own.payment().get(public_id)["status"] == 404
    assert [
        p["id"] for p in mp.payment().search({"external_reference": "sdk-scope"})["response"]["results"]
    ] == [public_id]
