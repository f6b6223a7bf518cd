"""The asynchronous client, generated from _sync.py by tests/client/generate_async.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx

from payorch.client import _operations as ops
from payorch.client._async_admin import AsyncAdministration, each_item
from payorch.client._core import (
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT,
    USER_AGENT,
    Call,
    Lines,
    RetryPolicy,
    api_error,
    decode,
    network_error,
    parse,
    parse_page,
    request_headers,
    retry_delay,
)
from payorch.client._holds import AsyncHolds
from payorch.client._links import AsyncLinks
from payorch.client._version import __version__
from payorch.client.errors import PayorchError
from payorch.client.models import (
    Checkout,
    Event,
    Page,
    Payment,
    PaymentIntent,
    Refund,
)


class AsyncPayorchClient(AsyncAdministration, AsyncLinks, AsyncHolds):
    """payorch's API from asyncio code.

    >>> async with AsyncPayorchClient("pay_sb_...", base_url="http://127.0.0.1:8000") as client:
    ...     intent = await client.create_payment_intent(merchant_account_id="mrc_...", ...)

    ``transport`` replaces the network (``httpx.ASGITransport(app)`` or ``httpx.MockTransport``
    in tests); ``sleep`` replaces ``asyncio.sleep`` between retries.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("api_key is required")
        self.base_url = base_url.rstrip("/")
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
            headers={
                **(headers or {}),
                "Authorization": f"Bearer {api_key}",
                "Accept": "application/json",
                "User-Agent": f"{USER_AGENT}/{__version__}",
            },
        )

    def __repr__(self) -> str:
        return f"AsyncPayorchClient(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncPayorchClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def request(self, call: Call) -> Any:
        """Send one operation, retrying as the policy allows; the decoded JSON of the answer."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    headers=request_headers(call),
                )
            except httpx.TransportError as exc:
                delay = retry_delay(self._retry, call, attempt, transport_error=exc)
                if delay is None:
                    raise network_error(exc) from exc
            else:
                try:
                    return decode(response)
                except PayorchError as error:
                    delay = retry_delay(self._retry, call, attempt, error=error)
                    if delay is None:
                        raise
            await self._sleep(delay)

    # Payment intents and checkout

    async def create_payment_intent(
        self,
        *,
        merchant_account_id: str,
        external_reference: str,
        amount: int,
        currency: str,
        return_url: str,
        description: str | None = None,
        provider: str | None = None,
        metadata: dict[str, str] | None = None,
        idempotency_key: str | None = None,
        capture_method: str | None = None,
    ) -> PaymentIntent:
        """``capture_method`` "manual": the provider holds the money (REQUIRES_CAPTURE) until
        ``capture_payment`` or ``void_payment``; None: the server's default, "automatic"."""
        call = ops.create_payment_intent(
            merchant_account_id=merchant_account_id,
            external_reference=external_reference,
            amount=amount,
            currency=currency,
            return_url=return_url,
            description=description,
            provider=provider,
            metadata=metadata,
            idempotency_key=idempotency_key,
            capture_method=capture_method,
        )
        return parse(PaymentIntent, await self.request(call))

    async def get_payment_intent(self, payment_intent_id: str) -> PaymentIntent:
        return parse(PaymentIntent, await self.request(ops.get_payment_intent(payment_intent_id)))

    async def create_checkout(
        self,
        payment_intent_id: str,
        *,
        provider: str | None = None,
        idempotency_key: str | None = None,
    ) -> Checkout:
        """``provider``: ``auto`` or a provider id; None keeps the one requested on the intent."""
        call = ops.create_checkout(
            payment_intent_id, provider=provider, idempotency_key=idempotency_key
        )
        return parse(Checkout, await self.request(call))

    async def cancel_payment_intent(
        self,
        payment_intent_id: str,
        *,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> PaymentIntent:
        """CREATED or REQUIRES_ACTION -> CANCELLED; the provider is asked first and wins (409)."""
        call = ops.cancel_payment_intent(
            payment_intent_id, reason=reason, idempotency_key=idempotency_key
        )
        return parse(PaymentIntent, await self.request(call))

    async def list_payment_intents(
        self,
        *,
        status: str | Sequence[str] | None = None,
        provider: str | None = None,
        merchant_account_id: str | None = None,
        external_reference: str | None = None,
        from_: ops.Moment | None = None,
        to: ops.Moment | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> Page[PaymentIntent]:
        """Newest first; each item without ``timeline`` and ``payment`` (read the intent)."""
        call = ops.list_payment_intents(
            status=status,
            provider=provider,
            merchant_account_id=merchant_account_id,
            external_reference=external_reference,
            from_=from_,
            to=to,
            cursor=cursor,
            limit=limit,
        )
        return parse_page(PaymentIntent, await self.request(call))

    def iter_payment_intents(
        self,
        *,
        status: str | Sequence[str] | None = None,
        provider: str | None = None,
        merchant_account_id: str | None = None,
        external_reference: str | None = None,
        from_: ops.Moment | None = None,
        to: ops.Moment | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[PaymentIntent]:
        """Every intent matching the filters, newest first, fetching pages as needed."""
        return each_item(
            lambda cursor: self.list_payment_intents(
                status=status,
                provider=provider,
                merchant_account_id=merchant_account_id,
                external_reference=external_reference,
                from_=from_,
                to=to,
                cursor=cursor,
                limit=limit,
            )
        )

    # Payments and refunds

    async def list_payments(
        self,
        *,
        status: str | None = None,
        from_: ops.Moment | None = None,
        to: ops.Moment | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> Page[Payment]:
        call = ops.list_payments(status=status, from_=from_, to=to, cursor=cursor, limit=limit)
        return parse_page(Payment, await self.request(call))

    def iter_payments(
        self,
        *,
        status: str | None = None,
        from_: ops.Moment | None = None,
        to: ops.Moment | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[Payment]:
        """Every payment matching the filters, newest first, fetching pages as needed."""
        return each_item(
            lambda cursor: self.list_payments(
                status=status, from_=from_, to=to, cursor=cursor, limit=limit
            )
        )

    async def export(
        self,
        kind: str,
        *,
        from_: ops.Moment,
        to: ops.Moment,
        format: str = "csv",
    ) -> AsyncIterator[str]:
        """GET /v1/exports/{kind} (payments, refunds, disputes, balances) of [from_, to), its lines
        as they arrive, each with its line end: ``csv.reader(client.export(...))`` reads the CSV.
        One attempt (a retry would repeat lines already given); errors are raised as typed."""
        call = ops.export(kind, from_=from_, to=to, format=format)
        lines = Lines()
        try:
            async with self._http.stream(
                call.method, call.path, params=call.params, headers=request_headers(call)
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise api_error(response)
                async for text in response.aiter_text():
                    for line in lines.feed(text):
                        yield line
        except httpx.TransportError as exc:
            raise network_error(exc) from exc
        for line in lines.end():
            yield line

    async def get_payment(self, payment_id: str) -> Payment:
        return parse(Payment, await self.request(ops.get_payment(payment_id)))

    async def create_refund(
        self,
        payment_id: str,
        *,
        amount: int | None = None,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> Refund:
        call = ops.create_refund(
            payment_id, amount=amount, reason=reason, idempotency_key=idempotency_key
        )
        return parse(Refund, await self.request(call))

    async def list_refunds(
        self, payment_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> Page[Refund]:
        return parse_page(
            Refund, await self.request(ops.list_refunds(payment_id, cursor=cursor, limit=limit))
        )

    # Events

    async def list_events(
        self,
        *,
        type: str | None = None,
        payment_intent_id: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> Page[Event]:
        call = ops.list_events(
            type=type, payment_intent_id=payment_intent_id, cursor=cursor, limit=limit
        )
        return parse_page(Event, await self.request(call))

    def iter_events(
        self,
        *,
        type: str | None = None,
        payment_intent_id: str | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[Event]:
        return each_item(
            lambda cursor: self.list_events(
                type=type, payment_intent_id=payment_intent_id, cursor=cursor, limit=limit
            )
        )
