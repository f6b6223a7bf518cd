"""The administration operations of the synchronous client (webhook endpoints and deliveries, connectors,
routing, API credentials, users, simulator controls), mixed into PayorchClient."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

from payorch.client import _operations as ops
from payorch.client._core import Call, parse, parse_list, parse_page
from payorch.client.models import (
    ApiCredential,
    Connector,
    Page,
    RoutingEvaluation,
    RoutingVersion,
    User,
    WebhookDelivery,
    WebhookEndpoint,
)

ItemT = TypeVar("ItemT")


def each_item(page_at: Callable[[str | None], Page[ItemT]]) -> Iterator[ItemT]:
    """Every item of a list, fetching pages (by cursor) as they are needed."""
    cursor: str | None = None
    while True:
        page = page_at(cursor)
        yield from page.items
        if not page.next_cursor:
            return
        cursor = page.next_cursor


class SyncAdministration:
    def request(self, call: Call) -> Any:
        raise NotImplementedError  # PayorchClient's

    # Webhook endpoints and deliveries

    def create_webhook_endpoint(
        self, *, url: str, events: list[str] | None = None, idempotency_key: str | None = None
    ) -> WebhookEndpoint:
        """The answer carries ``secret`` (only this once): store it to verify notices."""
        call = ops.create_webhook_endpoint(url=url, events=events, idempotency_key=idempotency_key)
        return parse(WebhookEndpoint, self.request(call))

    def list_webhook_endpoints(
        self, *, cursor: str | None = None, limit: int | None = None
    ) -> Page[WebhookEndpoint]:
        call = ops.list_webhook_endpoints(cursor=cursor, limit=limit)
        return parse_page(WebhookEndpoint, self.request(call))

    def iter_webhook_endpoints(self, *, limit: int | None = None) -> Iterator[WebhookEndpoint]:
        return each_item(lambda cursor: self.list_webhook_endpoints(cursor=cursor, limit=limit))

    def get_webhook_endpoint(self, endpoint_id: str) -> WebhookEndpoint:
        return parse(WebhookEndpoint, self.request(ops.get_webhook_endpoint(endpoint_id)))

    def update_webhook_endpoint(
        self,
        endpoint_id: str,
        *,
        url: str | None = None,
        events: list[str] | None = None,
        enabled: bool | None = None,
    ) -> WebhookEndpoint:
        call = ops.update_webhook_endpoint(endpoint_id, url=url, events=events, enabled=enabled)
        return parse(WebhookEndpoint, self.request(call))

    def delete_webhook_endpoint(self, endpoint_id: str) -> None:
        self.request(ops.delete_webhook_endpoint(endpoint_id))

    def list_webhook_deliveries(
        self, endpoint_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> Page[WebhookDelivery]:
        call = ops.list_webhook_deliveries(endpoint_id, cursor=cursor, limit=limit)
        return parse_page(WebhookDelivery, self.request(call))

    def iter_webhook_deliveries(
        self, endpoint_id: str, *, limit: int | None = None
    ) -> Iterator[WebhookDelivery]:
        return each_item(
            lambda cursor: self.list_webhook_deliveries(endpoint_id, cursor=cursor, limit=limit)
        )

    def get_webhook_delivery(self, endpoint_id: str, delivery_id: str) -> WebhookDelivery:
        call = ops.get_webhook_delivery(endpoint_id, delivery_id)
        return parse(WebhookDelivery, self.request(call))

    def retry_webhook_delivery(self, endpoint_id: str, delivery_id: str) -> WebhookDelivery:
        return parse(
            WebhookDelivery, self.request(ops.retry_webhook_delivery(endpoint_id, delivery_id))
        )

    def send_webhook_test(self, endpoint_id: str) -> WebhookDelivery:
        """Queue a ``webhook.test`` event (``"test": true``) to this endpoint only: its delivery."""
        return parse(WebhookDelivery, self.request(ops.send_webhook_test(endpoint_id)))

    def rotate_webhook_secret(
        self, endpoint_id: str, *, overlap_seconds: int | None = None
    ) -> WebhookEndpoint:
        """A new ``secret`` (only in this answer); the previous one keeps signing beside it for
        ``overlap_seconds`` (server default one day, at most seven)."""
        call = ops.rotate_webhook_secret(endpoint_id, overlap_seconds=overlap_seconds)
        return parse(WebhookEndpoint, self.request(call))

    # Connectors (provider configurations)

    def list_connectors(self, merchant_account_id: str) -> list[Connector]:
        return parse_list(Connector, self.request(ops.list_connectors(merchant_account_id)))

    def create_connector(
        self,
        merchant_account_id: str,
        *,
        provider: str,
        mode: str,
        enabled: bool | None = None,
        priority: int | None = None,
        credentials: dict[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> Connector:
        call = ops.create_connector(
            merchant_account_id,
            provider=provider,
            mode=mode,
            enabled=enabled,
            priority=priority,
            credentials=credentials,
            idempotency_key=idempotency_key,
        )
        return parse(Connector, self.request(call))

    def update_connector(
        self,
        merchant_account_id: str,
        config_id: str,
        *,
        mode: str | None = None,
        enabled: bool | None = None,
        priority: int | None = None,
        credentials: dict[str, str] | None = None,
    ) -> Connector:
        changes = dict(mode=mode, enabled=enabled, priority=priority, credentials=credentials)
        return parse(
            Connector, self.request(ops.update_connector(merchant_account_id, config_id, changes))
        )

    # Routing (docs/routing.md)

    def get_routing(self, merchant_account_id: str) -> RoutingVersion:
        return parse(RoutingVersion, self.request(ops.get_routing(merchant_account_id)))

    def replace_routing(
        self, merchant_account_id: str, *, rules: list[dict[str, Any]], default: str = "priority"
    ) -> RoutingVersion:
        """Saves a new version and makes it active; 400 names each rule that fails its checks."""
        call = ops.replace_routing(merchant_account_id, default=default, rules=rules)
        return parse(RoutingVersion, self.request(call))

    def list_routing_versions(
        self, merchant_account_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> Page[RoutingVersion]:
        call = ops.list_routing_versions(merchant_account_id, cursor=cursor, limit=limit)
        return parse_page(RoutingVersion, self.request(call))

    def activate_routing_version(self, merchant_account_id: str, version: int) -> RoutingVersion:
        call = ops.activate_routing_version(merchant_account_id, version)
        return parse(RoutingVersion, self.request(call))

    def evaluate_routing(
        self,
        merchant_account_id: str,
        *,
        amount: int,
        currency: str,
        metadata: dict[str, str] | None = None,
        provider: str | None = None,
        payment_intent_id: str | None = None,
    ) -> RoutingEvaluation:
        """The decision a checkout with these fields would get now; nothing is written."""
        call = ops.evaluate_routing(
            merchant_account_id,
            amount=amount,
            currency=currency,
            metadata=metadata,
            provider=provider,
            payment_intent_id=payment_intent_id,
        )
        return parse(RoutingEvaluation, self.request(call))

    # API credentials

    def create_api_credential(
        self,
        *,
        name: str | None = None,
        scopes: Sequence[str] | None = None,
        expires_at: datetime | str | None = None,
        idempotency_key: str | None = None,
    ) -> ApiCredential:
        """The answer carries ``api_key`` (only this once). ``scopes``: what the key may do
        (None: every scope); ``expires_at``: when it stops working (a datetime with its zone)."""
        call = ops.create_api_credential(
            name=name, scopes=scopes, expires_at=expires_at, idempotency_key=idempotency_key
        )
        return parse(ApiCredential, self.request(call))

    def list_api_credentials(
        self, *, cursor: str | None = None, limit: int | None = None
    ) -> Page[ApiCredential]:
        """A page of the application's keys, newest first, revoked ones included."""
        call = ops.list_api_credentials(cursor=cursor, limit=limit)
        return parse_page(ApiCredential, self.request(call))

    def iter_api_credentials(self, *, limit: int | None = None) -> Iterator[ApiCredential]:
        return each_item(lambda cursor: self.list_api_credentials(cursor=cursor, limit=limit))

    def revoke_api_credential(self, credential_id: str) -> None:
        self.request(ops.revoke_api_credential(credential_id))

    # People (docs/access.md, "People")

    def invite_user(self, *, email: str, role: str) -> User:
        """The answer carries ``invite_url`` (only this once)."""
        return parse(User, self.request(ops.invite_user(email=email, role=role)))

    def list_users(self, *, cursor: str | None = None, limit: int | None = None) -> Page[User]:
        """A page of the application's users, newest first."""
        return parse_page(User, self.request(ops.list_users(cursor=cursor, limit=limit)))

    def iter_users(self, *, limit: int | None = None) -> Iterator[User]:
        return each_item(lambda cursor: self.list_users(cursor=cursor, limit=limit))

    def get_user(self, user_id: str) -> User:
        return parse(User, self.request(ops.get_user(user_id)))

    def update_user(
        self, user_id: str, *, role: str | None = None, disabled: bool | None = None
    ) -> User:
        """A new role, or ``disabled`` True/False; the person's sessions end."""
        call = ops.update_user(user_id, role=role, disabled=disabled)
        return parse(User, self.request(call))

    def remove_user(self, user_id: str) -> None:
        self.request(ops.remove_user(user_id))

    def reinvite_user(self, user_id: str) -> User:
        """A new ``invite_url`` for an INVITED user; the previous link stops working."""
        return parse(User, self.request(ops.reinvite_user(user_id)))

    # Sandbox simulator controls (SANDBOX keys, MOCK connectors only)

    def simulator_set_fault(self, provider: str, mode: str) -> dict[str, Any]:
        """``mode``: ``ok``, ``error`` (the simulated provider answers 500) or ``timeout``."""
        return dict(self.request(ops.simulator_set_fault(provider=provider, mode=mode)))

    def simulator_settle(
        self, payment_intent_id: str, outcome: str, *, provider: str | None = None
    ) -> dict[str, Any]:
        """Settle a payment the buyer left pending: ``outcome`` ``approve`` or ``reject``."""
        call = ops.simulator_settle(
            payment_intent_id=payment_intent_id, outcome=outcome, provider=provider
        )
        return dict(self.request(call))
