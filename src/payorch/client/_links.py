"""The payment link operations of both clients (docs/payment-links.md), mixed into PayorchClient
and AsyncPayorchClient."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from payorch.client._core import Call, clean, parse, parse_page, post, segment
from payorch.client.models import Page, PaymentLink

LINKS = "/v1/payment-links"


def create_payment_link(
    *,
    merchant_account_id: str,
    amount: int,
    currency: str,
    description: str,
    external_reference: str | None = None,
    expires_at: datetime | None = None,
    max_payments: int | None = None,
    after_payment_url: str | None = None,
    metadata: dict[str, str] | None = None,
    idempotency_key: str | None = None,
) -> Call:
    body = clean(
        {
            "merchant_account_id": merchant_account_id,
            "amount": amount,
            "currency": currency,
            "description": description,
            "external_reference": external_reference,
            "expires_at": expires_at.isoformat() if expires_at else None,
            "max_payments": max_payments,
            "after_payment_url": after_payment_url,
            "metadata": metadata,
        }
    )
    return post(LINKS, body, idempotency_key=idempotency_key, server_idempotent=True)


def list_payment_links(*, status: list[str] | None, cursor: str | None, limit: int | None) -> Call:
    return Call("GET", LINKS, params=clean({"status": status, "cursor": cursor, "limit": limit}))


def deactivate_payment_link(payment_link_id: str, message: str | None) -> Call:
    body = clean({"message": message})
    # Deactivating twice answers the link as it is: safe to retry.
    return Call("POST", f"{LINKS}/{segment(payment_link_id)}/deactivate", json=body, server_idempotent=True)


class SyncLinks:
    def request(self, call: Call) -> Any:
        raise NotImplementedError  # PayorchClient's

    def create_payment_link(self, **fields: Any) -> PaymentLink:
        """``merchant_account_id``, ``amount`` (minor units), ``currency``, ``description`` and
        the optional fields of POST /v1/payment-links; an Idempotency-Key is sent."""
        return parse(PaymentLink, self.request(create_payment_link(**fields)))

    def get_payment_link(self, payment_link_id: str) -> PaymentLink:
        return parse(PaymentLink, self.request(Call("GET", f"{LINKS}/{segment(payment_link_id)}")))

    def list_payment_links(
        self, *, status: list[str] | None = None, cursor: str | None = None, limit: int | None = None
    ) -> Page[PaymentLink]:
        return parse_page(
            PaymentLink, self.request(list_payment_links(status=status, cursor=cursor, limit=limit))
        )

    def deactivate_payment_link(self, payment_link_id: str, *, message: str | None = None) -> PaymentLink:
        return parse(PaymentLink, self.request(deactivate_payment_link(payment_link_id, message)))


class AsyncLinks:
    async def request(self, call: Call) -> Any:
        raise NotImplementedError  # AsyncPayorchClient's

    async def create_payment_link(self, **fields: Any) -> PaymentLink:
        """As PayorchClient.create_payment_link."""
        return parse(PaymentLink, await self.request(create_payment_link(**fields)))

    async def get_payment_link(self, payment_link_id: str) -> PaymentLink:
        return parse(PaymentLink, await self.request(Call("GET", f"{LINKS}/{segment(payment_link_id)}")))

    async def list_payment_links(
        self, *, status: list[str] | None = None, cursor: str | None = None, limit: int | None = None
    ) -> Page[PaymentLink]:
        call = list_payment_links(status=status, cursor=cursor, limit=limit)
        return parse_page(PaymentLink, await self.request(call))

    async def deactivate_payment_link(
        self, payment_link_id: str, *, message: str | None = None
    ) -> PaymentLink:
        return parse(PaymentLink, await self.request(deactivate_payment_link(payment_link_id, message)))
