"""payorch.client.webhooks.verify against an HMAC computed here, independently of the helper."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from payorch.client import WebhookVerificationError
from payorch.client.webhooks import standard_secret, verify

SECRET = "9f" * 32  # 64 hexadecimal characters, as the service issues
NOW = 1_800_000_000
BODY = json.dumps(
    {
        "id": "evt_1",
        "type": "payment.authorized",
        "created_at": "2027-01-15T08:00:00.000Z",
        "data": {"payment_intent_id": "payi_1", "payment_id": "pay_1", "amount": 1500},
    },
    separators=(",", ":"),
).encode()


def signed_headers(body: bytes = BODY, timestamp: int = NOW, secret: str = SECRET) -> dict[str, str]:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "X-Pay-Event-Id": "evt_1",
        "X-Pay-Timestamp": str(timestamp),
        "X-Pay-Signature": f"v1={digest}",
    }


def test_a_genuine_notice_verifies_and_parses() -> None:
    event = verify(BODY, signed_headers(), SECRET, now=NOW)
    assert event.id == "evt_1" and event.type == "payment.authorized"
    assert event.payment_intent_id == "payi_1" and event.data["amount"] == 1500


def test_header_names_are_case_insensitive() -> None:
    headers = {k.lower(): v for k, v in signed_headers().items()}
    assert verify(BODY, headers, SECRET, now=NOW).id == "evt_1"


@pytest.mark.parametrize("skew", [-300, 300, -299, 0, 120])
def test_timestamps_within_five_minutes_either_way_pass(skew: int) -> None:
    assert verify(BODY, signed_headers(timestamp=NOW + skew), SECRET, now=NOW).id == "evt_1"


@pytest.mark.parametrize("skew", [-301, 301, -86400, 86400])
def test_old_or_future_timestamps_are_refused(skew: int) -> None:
    with pytest.raises(WebhookVerificationError) as caught:
        verify(BODY, signed_headers(timestamp=NOW + skew), SECRET, now=NOW)
    assert caught.value.reason == "timestamp_out_of_tolerance"


def test_the_tolerance_can_be_narrowed() -> None:
    with pytest.raises(WebhookVerificationError):
        verify(BODY, signed_headers(timestamp=NOW - 61), SECRET, tolerance=60, now=NOW)


def test_a_tampered_body_is_refused() -> None:
    tampered = BODY.replace(b"1500", b"1")
    with pytest.raises(WebhookVerificationError) as caught:
        verify(tampered, signed_headers(), SECRET, now=NOW)
    assert caught.value.reason == "bad_signature"


def test_a_reserialized_body_is_refused() -> None:
    """The signature covers the raw bytes: parsing and dumping again changes them."""
    reserialized = json.dumps(json.loads(BODY)).encode()
    assert reserialized != BODY
    with pytest.raises(WebhookVerificationError):
        verify(reserialized, signed_headers(), SECRET, now=NOW)


def test_a_changed_timestamp_breaks_the_signature() -> None:
    headers = signed_headers()
    headers["X-Pay-Timestamp"] = str(NOW + 1)
    with pytest.raises(WebhookVerificationError) as caught:
        verify(BODY, headers, SECRET, now=NOW)
    assert caught.value.reason == "bad_signature"


def test_another_endpoints_secret_is_refused() -> None:
    with pytest.raises(WebhookVerificationError):
        verify(BODY, signed_headers(secret="a" * 64), SECRET, now=NOW)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"X-Pay-Signature": None}, "missing_header"),
        ({"X-Pay-Timestamp": None}, "missing_header"),
        ({"X-Pay-Timestamp": "yesterday"}, "bad_timestamp"),
        ({"X-Pay-Timestamp": "-5"}, "bad_timestamp"),
        ({"X-Pay-Signature": "v0=abc"}, "bad_signature"),
        ({"X-Pay-Signature": "deadbeef"}, "bad_signature"),
        ({"X-Pay-Event-Id": "evt_other"}, "bad_body"),
    ],
)
def test_malformed_headers_are_refused(change: dict[str, str | None], reason: str) -> None:
    headers: dict[str, str] = signed_headers()
    for name, value in change.items():
        if value is None:
            headers.pop(name)
        else:
            headers[name] = value
    with pytest.raises(WebhookVerificationError) as caught:
        verify(BODY, headers, SECRET, now=NOW)
    assert caught.value.reason == reason


def test_one_matching_signature_among_several_is_enough() -> None:
    headers = signed_headers()
    headers["X-Pay-Signature"] = "v1=" + "0" * 64 + ", " + headers["X-Pay-Signature"]
    assert verify(BODY, headers, SECRET, now=NOW).id == "evt_1"


def test_a_signed_body_that_is_not_an_event_is_refused() -> None:
    body = b"[1, 2]"
    with pytest.raises(WebhookVerificationError) as caught:
        verify(body, signed_headers(body=body), SECRET, now=NOW)
    assert caught.value.reason == "bad_body"


def test_text_instead_of_raw_bytes_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        verify(BODY.decode(), signed_headers(), SECRET, now=NOW)  # type: ignore[arg-type]


def test_default_clock_is_the_system_time() -> None:
    import time

    now = int(time.time())
    assert verify(BODY, signed_headers(timestamp=now), SECRET).id == "evt_1"
    with pytest.raises(WebhookVerificationError):
        verify(BODY, signed_headers(timestamp=now - 3600), SECRET)


def standard_headers(body: bytes = BODY, timestamp: int = NOW) -> dict[str, str]:
    """Standard Webhooks headers, computed here from that specification: the key is the base64
    decoding of the whsec_ form, i.e. the secret's text."""
    digest = hmac.new(SECRET.encode(), f"evt_1.{timestamp}.".encode() + body, hashlib.sha256)
    return {
        "webhook-id": "evt_1",
        "webhook-timestamp": str(timestamp),
        "webhook-signature": "v1," + base64.b64encode(digest.digest()).decode(),
    }


@pytest.mark.parametrize("secret", [SECRET, "whsec_" + base64.b64encode(SECRET.encode()).decode()])
def test_the_standard_webhooks_form_verifies_with_either_form_of_the_secret(secret: str) -> None:
    assert standard_secret(SECRET) == "whsec_" + base64.b64encode(SECRET.encode()).decode()
    assert verify(BODY, standard_headers(), secret, now=NOW).id == "evt_1"
    assert verify(BODY, signed_headers(), secret, now=NOW).id == "evt_1"
    # Several signatures, space-separated, as the specification allows: one match is enough.
    several = standard_headers()
    several["webhook-signature"] = "v1,AAAA " + several["webhook-signature"]
    assert verify(BODY, several, secret, now=NOW).id == "evt_1"


def test_the_standard_webhooks_form_refuses_tampering_replay_and_a_wrong_id() -> None:
    with pytest.raises(WebhookVerificationError) as caught:
        verify(BODY.replace(b"1500", b"1"), standard_headers(), SECRET, now=NOW)
    assert caught.value.reason == "bad_signature"
    with pytest.raises(WebhookVerificationError) as caught:
        verify(BODY, standard_headers(timestamp=NOW - 301), SECRET, now=NOW)
    assert caught.value.reason == "timestamp_out_of_tolerance"
    other_id = {**standard_headers(), "webhook-id": "evt_2"}
    with pytest.raises(WebhookVerificationError) as caught:
        verify(BODY, other_id, SECRET, now=NOW)
    assert caught.value.reason == "bad_signature"  # the id is signed
    no_id = {k: v for k, v in standard_headers().items() if k != "webhook-id"}
    with pytest.raises(WebhookVerificationError) as caught:
        verify(BODY, no_id, SECRET, now=NOW)
    assert caught.value.reason == "missing_header"
