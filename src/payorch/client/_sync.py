"""The synchronous client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import httpx

from payorch.client import _operations as ops
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
from payorch.client._holds import SyncHolds
from payorch.client._links import SyncLinks
from payorch.client._sync_admin import SyncAdministration, each_item
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


class PayorchClient(SyncAdministration, SyncLinks, SyncHolds):
    """payorch's API from synchronous code.

    >>> client = PayorchClient("pay_sb_...", base_url="http://127.0.0.1:8000")
    >>> intent = client.create_payment_intent(merchant_account_id="mrc_...", ...)

    ``transport`` replaces the network (``httpx.MockTransport`` in tests); ``sleep`` replaces
    ``time.sleep`` between retries.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("api_key is required")
        self.base_url = base_url.rstrip("/")
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._http = httpx.Client(
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
        return f"PayorchClient(base_url={self.base_url!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PayorchClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request(self, call: Call) -> Any:
        """Send one operation, retrying as the policy allows; the decoded JSON of the answer."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.request(
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
            self._sleep(delay)

    # Payment intents and checkout

    def create_payment_intent(
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
        return parse(PaymentIntent, self.request(call))

    def get_payment_intent(self, payment_intent_id: str) -> PaymentIntent:
        return parse(PaymentIntent, self.request(ops.get_payment_intent(payment_intent_id)))

    def create_checkout(
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
        return parse(Checkout, self.request(call))

    def cancel_payment_intent(
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
        return parse(PaymentIntent, self.request(call))

    def list_payment_intents(
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
        return parse_page(PaymentIntent, self.request(call))

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
    ) -> Iterator[PaymentIntent]:
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

    def list_payments(
        self,
        *,
        status: str | None = None,
        from_: ops.Moment | None = None,
        to: ops.Moment | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> Page[Payment]:
        call = ops.list_payments(status=status, from_=from_, to=to, cursor=cursor, limit=limit)
        return parse_page(Payment, self.request(call))

    def iter_payments(
        self,
        *,
        status: str | None = None,
        from_: ops.Moment | None = None,
        to: ops.Moment | None = None,
        limit: int | None = None,
    ) -> Iterator[Payment]:
        """Every payment matching the filters, newest first, fetching pages as needed."""
        return each_item(
            lambda cursor: self.list_payments(
                status=status, from_=from_, to=to, cursor=cursor, limit=limit
            )
        )

    def export(
        self,
        kind: str,
        *,
        from_: ops.Moment,
        to: ops.Moment,
        format: str = "csv",
    ) -> Iterator[str]:
        """GET /v1/exports/{kind} (payments, refunds, disputes, balances) of [from_, to), its lines
        as they arrive, each with its line end: ``csv.reader(client.export(...))`` reads the CSV.
        One attempt (a retry would repeat lines already given); errors are raised as typed."""
        call = ops.export(kind, from_=from_, to=to, format=format)
        lines = Lines()
        try:
            with self._http.stream(
                call.method, call.path, params=call.params, headers=request_headers(call)
            ) as response:
                if response.status_code != 200:
                    response.read()
                    raise api_error(response)
                for text in response.iter_text():
                    for line in lines.feed(text):
                        yield line
        except httpx.TransportError as exc:
            raise network_error(exc) from exc
        for line in lines.end():
            yield line

    def get_payment(self, payment_id: str) -> Payment:
        return parse(Payment, self.request(ops.get_payment(payment_id)))

    def create_refund(
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
        return parse(Refund, self.request(call))

    def list_refunds(
        self, payment_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> Page[Refund]:
        return parse_page(
            Refund, self.request(ops.list_refunds(payment_id, cursor=cursor, limit=limit))
        )

    # Events

    def list_events(
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
        return parse_page(Event, self.request(call))

    def iter_events(
        self,
        *,
        type: str | None = None,
        payment_intent_id: str | None = None,
        limit: int | None = None,
    ) -> Iterator[Event]:
        return each_item(
            lambda cursor: self.list_events(
                type=type, payment_intent_id=payment_intent_id, cursor=cursor, limit=limit
            )
        )
