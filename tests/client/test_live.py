"""The client against the real app: async over ASGI, sync over a live `payorch serve`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from payorch.app import create_app
from payorch.client import (
    AlreadyExistsError,
    AsyncPayorchClient,
    AuthenticationError,
    IdempotencyError,
    InvalidRequestError,
    InvalidStateError,
    NotFoundError,
    PayorchClient,
    PayorchConnectionError,
    RetryPolicy,
)
from payorch.runtime import Runtime
from tests.kit import Sandbox
from tests.live import free_port, live_server, payorch_env

pytestmark = pytest.mark.slow


def intent_args(sandbox: Sandbox, reference: str = "order-1") -> dict[str, object]:
    return {
        "merchant_account_id": sandbox.merchant_account_id,
        "external_reference": reference,
        "amount": 1500,
        "currency": "CLP",
        "return_url": "https://shop.example/return",
    }


@pytest.fixture(scope="module")
def live_url(database_url: str) -> Iterator[str]:
    with live_server(payorch_env(database_url), "--no-worker") as url:
        yield url


@pytest.fixture
def sync_client(live_url: str, sandbox: Sandbox) -> Iterator[PayorchClient]:
    with PayorchClient(sandbox.api_key, live_url) as client:
        yield client


@pytest.fixture
async def async_client(runtime: Runtime, sandbox: Sandbox) -> AsyncIterator[AsyncPayorchClient]:
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    async with AsyncPayorchClient(sandbox.api_key, "http://testserver", transport=transport) as c:
        yield c


def test_sync_create_read_and_replay(sync_client: PayorchClient, sandbox: Sandbox) -> None:
    created = sync_client.create_payment_intent(
        **intent_args(sandbox),
        metadata={"cart": "42"},
        idempotency_key="k-1",  # type: ignore[arg-type]
    )
    assert created.id.startswith("payi_") and created.status == "CREATED"
    assert created.metadata == {"cart": "42"} and created.created_at is not None
    replay = sync_client.create_payment_intent(
        **intent_args(sandbox),
        metadata={"cart": "42"},  # type: ignore[arg-type]
        idempotency_key="k-1",
    )
    assert replay.id == created.id
    read = sync_client.get_payment_intent(created.id)
    assert read.id == created.id and read.payment is None
    assert [t.type for t in read.timeline] == ["payment_intent.created"]


def test_sync_reused_key_with_another_body_is_an_idempotency_error(
    sync_client: PayorchClient, sandbox: Sandbox
) -> None:
    sync_client.create_payment_intent(**intent_args(sandbox), idempotency_key="k-2")  # type: ignore[arg-type]
    with pytest.raises(IdempotencyError) as caught:
        sync_client.create_payment_intent(
            **intent_args(sandbox, "order-2"),
            idempotency_key="k-2",  # type: ignore[arg-type]
        )
    assert caught.value.code == "IDEMPOTENCY_CONFLICT" and caught.value.status_code == 409
    assert caught.value.request_id and caught.value.request_id.startswith("req_")


def test_sync_errors_carry_code_and_request_id(
    sync_client: PayorchClient, live_url: str, sandbox: Sandbox
) -> None:
    with pytest.raises(NotFoundError) as missing:
        sync_client.get_payment_intent("payi_doesnotexist")
    assert missing.value.code == "RESOURCE_NOT_FOUND" and missing.value.request_id
    with pytest.raises(InvalidRequestError) as invalid:
        sync_client.create_payment_intent(**{**intent_args(sandbox), "amount": 0})  # type: ignore[arg-type]
    assert invalid.value.code == "VALIDATION_ERROR"
    assert invalid.value.details["errors"][0]["field"] == "amount"
    with PayorchClient("pay_sb_000000000000_" + "0" * 48, live_url) as stranger:
        with pytest.raises(AuthenticationError) as denied:
            stranger.get_payment_intent("payi_x")
    assert denied.value.code == "AUTHENTICATION_FAILED" and denied.value.status_code == 401


def test_sync_connection_refused_is_a_connection_error() -> None:
    sleeps: list[float] = []
    client = PayorchClient(
        "pay_sb_000000000000_" + "0" * 48,
        f"http://127.0.0.1:{free_port()}",
        retry=RetryPolicy(max_attempts=2, jitter=False),
        sleep=sleeps.append,
    )
    with pytest.raises(PayorchConnectionError):
        client.get_payment_intent("payi_x")
    assert sleeps == [0.5]


async def test_async_create_and_read(async_client: AsyncPayorchClient, sandbox: Sandbox) -> None:
    created = await async_client.create_payment_intent(**intent_args(sandbox))  # type: ignore[arg-type]
    read = await async_client.get_payment_intent(created.id)
    assert read.id == created.id and read.amount == 1500 and read.currency == "CLP"
    with pytest.raises(NotFoundError):
        await async_client.get_payment_intent("payi_nope")


def test_sync_cancel_payment_intent(sync_client: PayorchClient, sandbox: Sandbox) -> None:
    created = sync_client.create_payment_intent(**intent_args(sandbox, "order-cancel"))  # type: ignore[arg-type]
    cancelled = sync_client.cancel_payment_intent(
        created.id, reason="out of stock", idempotency_key="cancel-1"
    )
    assert cancelled.id == created.id and cancelled.status == "CANCELLED"
    assert (
        sync_client.cancel_payment_intent(
            created.id, reason="out of stock", idempotency_key="cancel-1"
        ).status
        == "CANCELLED"
    )
    with pytest.raises(InvalidStateError) as refused:
        sync_client.cancel_payment_intent(created.id)  # already CANCELLED: 409 INVALID_STATE
    assert refused.value.code == "INVALID_STATE"


async def test_async_cancel_payment_intent(async_client: AsyncPayorchClient, sandbox: Sandbox) -> None:
    created = await async_client.create_payment_intent(**intent_args(sandbox, "order-cancel-a"))  # type: ignore[arg-type]
    cancelled = await async_client.cancel_payment_intent(created.id)
    assert cancelled.status == "CANCELLED"
    assert [t.type for t in cancelled.timeline][-1] == "payment.cancelled"


def test_sync_list_and_iterate_payment_intents(sync_client: PayorchClient, sandbox: Sandbox) -> None:
    made = [
        sync_client.create_payment_intent(**intent_args(sandbox, f"order-list-{i}")).id  # type: ignore[arg-type]
        for i in range(3)
    ]
    cancelled = sync_client.cancel_payment_intent(made[0]).id
    page = sync_client.list_payment_intents(limit=2)
    assert [i.id for i in page.items] == made[:0:-1] and page.next_cursor is not None
    assert page.items[0].timeline == [] and page.items[0].payment is None  # not in list items
    assert [i.id for i in sync_client.iter_payment_intents(limit=1)] == made[::-1]
    assert [i.id for i in sync_client.iter_payment_intents(status="CANCELLED")] == [cancelled]
    both = sync_client.iter_payment_intents(status=["CREATED", "CANCELLED"], from_="2000-01-01")
    assert [i.id for i in both] == made[::-1]
    by_reference = sync_client.list_payment_intents(external_reference="order-list-1")
    assert [i.id for i in by_reference.items] == [made[1]]
    with pytest.raises(InvalidRequestError) as refused:
        sync_client.list_payment_intents(status="STUCK")
    assert refused.value.code == "VALIDATION_ERROR"


async def test_async_list_payment_intents(async_client: AsyncPayorchClient, sandbox: Sandbox) -> None:
    created = await async_client.create_payment_intent(**intent_args(sandbox, "order-list-a"))  # type: ignore[arg-type]
    page = await async_client.list_payment_intents(merchant_account_id=sandbox.merchant_account_id)
    assert [i.id for i in page.items] == [created.id] and page.next_cursor is None
    assert [i.id async for i in async_client.iter_payment_intents(status="CREATED")] == [created.id]


async def test_async_connector_then_checkout(async_client: AsyncPayorchClient, sandbox: Sandbox) -> None:
    connector = await async_client.create_connector(
        sandbox.merchant_account_id,
        provider="provider_a_redirect_post",
        mode="MOCK",
        priority=1,
    )
    assert connector.id.startswith("cfg_") and connector.has_credentials is False
    with pytest.raises(AlreadyExistsError) as duplicate:
        await async_client.create_connector(
            sandbox.merchant_account_id, provider="provider_a_redirect_post", mode="MOCK"
        )
    assert duplicate.value.code == "CONNECTOR_CONFIG_ALREADY_EXISTS"
    changed = await async_client.update_connector(sandbox.merchant_account_id, connector.id, priority=5)
    assert changed.priority == 5
    created = await async_client.create_payment_intent(**intent_args(sandbox))  # type: ignore[arg-type]
    checkout = await async_client.create_checkout(created.id, idempotency_key="co-1")
    assert checkout.payment_intent_id == created.id and checkout.status == "REQUIRES_ACTION"
    assert checkout.provider == "provider_a_redirect_post"
    assert checkout.checkout.method == "POST" and "token_ws" in checkout.checkout.fields
    assert 'name="token_ws"' in checkout.checkout.html_form()
    replay = await async_client.create_checkout(created.id, idempotency_key="co-1")
    assert replay.checkout.fields == checkout.checkout.fields
    intent = await async_client.get_payment_intent(created.id)
    assert intent.status == "REQUIRES_ACTION" and intent.provider == "provider_a_redirect_post"


async def test_async_simulator_controls(async_client: AsyncPayorchClient, sandbox: Sandbox) -> None:
    fault = await async_client.simulator_set_fault("provider_b_redirect_get", "error")
    assert fault["mode"] == "error"
    assert (await async_client.simulator_set_fault("provider_b_redirect_get", "ok"))["mode"] == "ok"


async def test_async_payments_iterate(async_client: AsyncPayorchClient) -> None:
    page = await async_client.list_payments(limit=1)
    assert page.items == [] and page.next_cursor is None  # a fresh application has no payment
    assert [p async for p in async_client.iter_payments()] == []


async def test_async_api_credentials(async_client: AsyncPayorchClient, sandbox: Sandbox) -> None:
    created = await async_client.create_api_credential(name="ci")
    assert created.api_key is not None and created.api_key.get_secret_value().startswith("pay_sb_")
    page = await async_client.list_api_credentials(limit=1)
    assert [c.id for c in page.items] == [created.id] and page.next_cursor == created.id
    listed = [c async for c in async_client.iter_api_credentials(limit=1)]
    assert len(listed) == 2 and listed[0].id == created.id  # the sandbox's first key follows
    assert all(c.api_key is None for c in listed)
    await async_client.revoke_api_credential(created.id)


async def test_async_webhook_endpoints(async_client: AsyncPayorchClient) -> None:
    endpoint = await async_client.create_webhook_endpoint(
        url="http://127.0.0.1:8080/hook", events=["payment.authorized"]
    )
    assert endpoint.secret is not None and len(endpoint.secret.get_secret_value()) == 64
    read = await async_client.get_webhook_endpoint(endpoint.id)
    assert read.secret is None and read.events == ["payment.authorized"]
    page = await async_client.list_webhook_deliveries(endpoint.id)
    assert page.items == []
    await async_client.delete_webhook_endpoint(endpoint.id)
    with pytest.raises(NotFoundError):
        await async_client.get_webhook_endpoint(endpoint.id)


async def test_async_connectors_and_events(async_client: AsyncPayorchClient, sandbox: Sandbox) -> None:
    connectors = await async_client.list_connectors(sandbox.merchant_account_id)
    assert all(c.id.startswith("cfg_") for c in connectors)
    created = await async_client.create_payment_intent(**intent_args(sandbox))  # type: ignore[arg-type]
    events = [e async for e in async_client.iter_events(payment_intent_id=created.id)]
    assert [e.type for e in events] == ["payment_intent.created"]
