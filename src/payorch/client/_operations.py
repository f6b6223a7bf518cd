"""The request of every API operation, built once for both clients (docs/api.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from payorch.client._core import Call, clean, post, segment

INTENTS = "/v1/payment-intents"
PAYMENTS = "/v1/payments"
WEBHOOK_ENDPOINTS = "/v1/admin/webhook-endpoints"
API_CREDENTIALS = "/v1/admin/api-credentials"
USERS = "/v1/admin/users"
EVENTS = "/v1/events"
EXPORTS = "/v1/exports"

Moment = date | datetime | str


def create_payment_intent(
    *,
    merchant_account_id: str,
    external_reference: str,
    amount: int,
    currency: str,
    return_url: str,
    description: str | None,
    provider: str | None,
    metadata: dict[str, str] | None,
    idempotency_key: str | None,
    capture_method: str | None = None,
) -> Call:
    body = clean(
        {
            "merchant_account_id": merchant_account_id,
            "external_reference": external_reference,
            "amount": amount,
            "currency": currency,
            "return_url": return_url,
            "description": description,
            "provider": provider,
            "metadata": metadata,
            "capture_method": capture_method,
        }
    )
    return post(INTENTS, body, idempotency_key=idempotency_key, server_idempotent=True)


def get_payment_intent(payment_intent_id: str) -> Call:
    return Call("GET", f"{INTENTS}/{segment(payment_intent_id)}")


def create_checkout(
    payment_intent_id: str, *, provider: str | None, idempotency_key: str | None
) -> Call:
    # No provider: the one requested when the intent was created.
    return post(
        f"{INTENTS}/{segment(payment_intent_id)}/checkout",
        clean({"provider": provider}),
        idempotency_key=idempotency_key,
        server_idempotent=True,
    )


def cancel_payment_intent(
    payment_intent_id: str, *, reason: str | None, idempotency_key: str | None
) -> Call:
    return post(
        f"{INTENTS}/{segment(payment_intent_id)}/cancel",
        clean({"reason": reason}),
        idempotency_key=idempotency_key,
        server_idempotent=True,
    )


def list_payment_intents(
    *,
    status: str | Sequence[str] | None,
    provider: str | None,
    merchant_account_id: str | None,
    external_reference: str | None,
    from_: Moment | None,
    to: Moment | None,
    cursor: str | None,
    limit: int | None,
) -> Call:
    """``status``: one status or several (the parameter is repeated)."""
    statuses = [status] if isinstance(status, str) else list(status or []) or None
    params = clean(
        {
            "status": statuses,
            "provider": provider,
            "merchant_account_id": merchant_account_id,
            "external_reference": external_reference,
            "from": from_,
            "to": to,
            "cursor": cursor,
            "limit": limit,
        }
    )
    return Call("GET", INTENTS, params=params)


def list_payments(
    *,
    status: str | None,
    from_: Moment | None,
    to: Moment | None,
    cursor: str | None,
    limit: int | None,
) -> Call:
    params = clean({"status": status, "from": from_, "to": to, "cursor": cursor, "limit": limit})
    return Call("GET", PAYMENTS, params=params)


def export(kind: str, *, from_: Moment, to: Moment, format: str) -> Call:
    """``kind``: payments, refunds, disputes or balances; ``format``: csv or jsonl."""
    return Call(
        "GET", f"{EXPORTS}/{segment(kind)}", params=clean({"from": from_, "to": to, "format": format})
    )


def get_payment(payment_id: str) -> Call:
    return Call("GET", f"{PAYMENTS}/{segment(payment_id)}")


def create_refund(
    payment_id: str, *, amount: int | None, reason: str | None, idempotency_key: str | None
) -> Call:
    return post(
        f"{PAYMENTS}/{segment(payment_id)}/refunds",
        clean({"amount": amount, "reason": reason}),
        idempotency_key=idempotency_key,
        server_idempotent=True,
    )


def list_refunds(payment_id: str, *, cursor: str | None = None, limit: int | None = None) -> Call:
    params = clean({"cursor": cursor, "limit": limit})
    return Call("GET", f"{PAYMENTS}/{segment(payment_id)}/refunds", params=params)


def create_webhook_endpoint(
    *, url: str, events: list[str] | None, idempotency_key: str | None
) -> Call:
    return post(
        WEBHOOK_ENDPOINTS, clean({"url": url, "events": events}), idempotency_key=idempotency_key
    )


def list_webhook_endpoints(*, cursor: str | None, limit: int | None) -> Call:
    return Call("GET", WEBHOOK_ENDPOINTS, params=clean({"cursor": cursor, "limit": limit}))


def get_webhook_endpoint(endpoint_id: str) -> Call:
    return Call("GET", f"{WEBHOOK_ENDPOINTS}/{segment(endpoint_id)}")


def update_webhook_endpoint(
    endpoint_id: str, *, url: str | None, events: list[str] | None, enabled: bool | None
) -> Call:
    body = clean({"url": url, "events": events, "enabled": enabled})
    return Call("PATCH", f"{WEBHOOK_ENDPOINTS}/{segment(endpoint_id)}", json=body)


def delete_webhook_endpoint(endpoint_id: str) -> Call:
    return Call("DELETE", f"{WEBHOOK_ENDPOINTS}/{segment(endpoint_id)}")


def list_webhook_deliveries(endpoint_id: str, *, cursor: str | None, limit: int | None) -> Call:
    return Call(
        "GET",
        f"{WEBHOOK_ENDPOINTS}/{segment(endpoint_id)}/deliveries",
        params=clean({"cursor": cursor, "limit": limit}),
    )


def get_webhook_delivery(endpoint_id: str, delivery_id: str) -> Call:
    return Call(
        "GET", f"{WEBHOOK_ENDPOINTS}/{segment(endpoint_id)}/deliveries/{segment(delivery_id)}"
    )


def retry_webhook_delivery(endpoint_id: str, delivery_id: str) -> Call:
    # Retrying a delivery twice is harmless (the second finds it pending or succeeded), so the
    # call is replay-safe although the endpoint takes no Idempotency-Key.
    return Call(
        "POST",
        f"{WEBHOOK_ENDPOINTS}/{segment(endpoint_id)}/deliveries/{segment(delivery_id)}/retry",
        server_idempotent=True,
    )


def send_webhook_test(endpoint_id: str) -> Call:
    # Not replayed on a lost answer: a second test event would be sent.
    return Call("POST", f"{WEBHOOK_ENDPOINTS}/{segment(endpoint_id)}/test")


def rotate_webhook_secret(endpoint_id: str, *, overlap_seconds: int | None) -> Call:
    # Never replayed: a second rotation would replace the secret this one returned.
    body = clean({"overlap_seconds": overlap_seconds})
    return Call("POST", f"{WEBHOOK_ENDPOINTS}/{segment(endpoint_id)}/secret/rotate", json=body)


def list_events(
    *, type: str | None, payment_intent_id: str | None, cursor: str | None, limit: int | None
) -> Call:
    params = clean(
        {"type": type, "payment_intent_id": payment_intent_id, "cursor": cursor, "limit": limit}
    )
    return Call("GET", EVENTS, params=params)


def _connectors(merchant_account_id: str) -> str:
    return f"/v1/admin/merchant-accounts/{segment(merchant_account_id)}/connectors"


def list_connectors(merchant_account_id: str) -> Call:
    return Call("GET", _connectors(merchant_account_id))


def create_connector(
    merchant_account_id: str,
    *,
    provider: str,
    mode: str,
    enabled: bool | None,
    priority: int | None,
    credentials: dict[str, str] | None,
    idempotency_key: str | None,
) -> Call:
    body = clean(
        {
            "provider": provider,
            "mode": mode,
            "enabled": enabled,
            "priority": priority,
            "credentials": credentials,
        }
    )
    # A repeated create answers 409 CONNECTOR_CONFIG_ALREADY_EXISTS: it cannot create twice.
    return post(
        _connectors(merchant_account_id),
        body,
        idempotency_key=idempotency_key,
        server_idempotent=True,
    )


def update_connector(merchant_account_id: str, config_id: str, changes: dict[str, Any]) -> Call:
    return Call(
        "PATCH", f"{_connectors(merchant_account_id)}/{segment(config_id)}", json=clean(changes)
    )


def _routing(merchant_account_id: str) -> str:
    return f"/v1/admin/merchant-accounts/{segment(merchant_account_id)}/routing"


def get_routing(merchant_account_id: str) -> Call:
    return Call("GET", _routing(merchant_account_id))


def replace_routing(merchant_account_id: str, *, default: str, rules: Sequence[Any]) -> Call:
    # Each PUT saves a new version with the same rules: a retry adds a version, changes nothing.
    return Call("PUT", _routing(merchant_account_id), json={"default": default, "rules": list(rules)})


def list_routing_versions(merchant_account_id: str, *, cursor: str | None, limit: int | None) -> Call:
    params = clean({"cursor": cursor, "limit": limit})
    return Call("GET", f"{_routing(merchant_account_id)}/versions", params=params)


def activate_routing_version(merchant_account_id: str, version: int) -> Call:
    # Activating a version twice is the same as once: safe to retry.
    path = f"{_routing(merchant_account_id)}/versions/{int(version)}/activate"
    return Call("POST", path, server_idempotent=True)


def evaluate_routing(
    merchant_account_id: str,
    *,
    amount: int,
    currency: str,
    metadata: dict[str, str] | None,
    provider: str | None,
    payment_intent_id: str | None,
) -> Call:
    body = clean(
        {
            "amount": amount,
            "currency": currency,
            "metadata": metadata,
            "provider": provider,
            "payment_intent_id": payment_intent_id,
        }
    )
    # A dry run writes nothing: safe to retry.
    return Call("POST", f"{_routing(merchant_account_id)}/evaluate", json=body, server_idempotent=True)


def create_api_credential(
    *,
    name: str | None,
    scopes: Sequence[str] | None,
    expires_at: datetime | str | None,
    idempotency_key: str | None,
) -> Call:
    listed = list(scopes) if scopes is not None else None
    body = clean({"name": name, "scopes": listed, "expires_at": expires_at})
    return post(API_CREDENTIALS, body, idempotency_key=idempotency_key)


def list_api_credentials(*, cursor: str | None, limit: int | None) -> Call:
    return Call("GET", API_CREDENTIALS, params=clean({"cursor": cursor, "limit": limit}))


def revoke_api_credential(credential_id: str) -> Call:
    return Call("DELETE", f"{API_CREDENTIALS}/{segment(credential_id)}")


def invite_user(*, email: str, role: str) -> Call:
    # Not deduplicated by the server (the invite URL is not stored): not replayed after an
    # unknown outcome; a second invite of the email would be 409 anyway.
    return post(USERS, {"email": email, "role": role}, idempotency_key=None)


def list_users(*, cursor: str | None, limit: int | None) -> Call:
    return Call("GET", USERS, params=clean({"cursor": cursor, "limit": limit}))


def get_user(user_id: str) -> Call:
    return Call("GET", f"{USERS}/{segment(user_id)}")


def update_user(user_id: str, *, role: str | None, disabled: bool | None) -> Call:
    body = clean({"role": role, "disabled": disabled})
    return Call("PATCH", f"{USERS}/{segment(user_id)}", json=body)


def remove_user(user_id: str) -> Call:
    return Call("DELETE", f"{USERS}/{segment(user_id)}")


def reinvite_user(user_id: str) -> Call:
    return post(f"{USERS}/{segment(user_id)}/invite", None, idempotency_key=None)


def simulator_set_fault(*, provider: str, mode: str) -> Call:
    # Setting a mode twice is the same as once: safe to retry.
    return Call(
        "POST",
        "/simulator/controls/faults",
        json={"provider": provider, "mode": mode},
        server_idempotent=True,
    )


def simulator_settle(*, payment_intent_id: str, outcome: str, provider: str | None) -> Call:
    body = clean({"payment_intent_id": payment_intent_id, "outcome": outcome, "provider": provider})
    return Call("POST", "/simulator/controls/settle", json=body)
