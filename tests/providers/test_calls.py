"""providers/calls.py against a scripted provider API: the answer expected is parsed, a 404 read
is None, a refusal is classified, a garbage or failed answer is unavailable."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import BaseModel

from payorch.clock import FrozenClock
from payorch.providers.base import ConnectorContext, Mode, ProviderRejected, ProviderUnavailable
from payorch.providers.calls import call, read_or_none
from payorch.providers.refusals import ErrorBody, Refusals
from tests.providers.fake_transport import FakeProvider, Handler, broken, fake_http, reply
from tests.providers.helpers import connector_context

PROVIDER = "provider_t_redirect_get"
BASE = "https://api.provider-t.example"
HEADERS = {"Authorization": "Bearer sk_t"}


class Thing(BaseModel):
    id: str
    amount: int


def _said(operation: str, response: httpx.Response) -> ErrorBody:
    return ErrorBody(response.json().get("message") if response.content else None)


refusals = Refusals(PROVIDER, _said)


@pytest.fixture
def fake() -> FakeProvider:
    return FakeProvider()


@pytest.fixture
async def ctx(fake: FakeProvider) -> AsyncIterator[ConnectorContext]:
    async with fake_http(fake) as http:
        yield connector_context(
            PROVIDER, mode=Mode.SANDBOX, base_url=BASE, credentials={}, http=http, clock=FrozenClock()
        )


async def test_call_sends_the_request_and_parses_an_expected_answer(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    fake.on("POST", "/v1/things", reply(201, {"id": "th_1", "amount": 5}))
    thing = await call(
        ctx,
        "create",
        "POST",
        "/v1/things",
        Thing,
        headers=HEADERS,
        refusals=refusals,
        ok=frozenset({200, 201}),
        json={"amount": 5},
        params={"expand": "all"},
    )
    assert thing == Thing(id="th_1", amount=5)
    sent = fake.requests[0]
    assert sent.headers["Authorization"] == "Bearer sk_t"
    assert sent.url.params["expand"] == "all"
    assert sent.content == b'{"amount":5}'


async def test_call_refuses_a_status_it_does_not_expect(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("POST", "/v1/things", reply(201, {"id": "th_1", "amount": 5}))
    with pytest.raises(ProviderUnavailable, match="create: unexpected HTTP 201"):
        await call(ctx, "create", "POST", "/v1/things", Thing, headers=HEADERS, refusals=refusals)
    fake.on("POST", "/v1/things", reply(400, {"message": "amount too small"}))
    with pytest.raises(ProviderRejected, match="create refused: amount too small"):
        await call(ctx, "create", "POST", "/v1/things", Thing, headers=HEADERS, refusals=refusals)


async def test_call_sends_a_body_already_encoded(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("POST", "/v1/things", reply(200, {"id": "th_2", "amount": 7}))
    form = {**HEADERS, "Content-Type": "application/x-www-form-urlencoded"}
    await call(
        ctx, "create", "POST", "/v1/things", Thing, headers=form, refusals=refusals, content=b"amount=7"
    )
    assert fake.requests[0].content == b"amount=7"


async def test_read_or_none_is_none_for_an_object_the_provider_does_not_know(
    ctx: ConnectorContext, fake: FakeProvider
) -> None:
    fake.on("GET", "/v1/things/th_1", reply(200, {"id": "th_1", "amount": 5}))
    fake.on("GET", "/v1/things/th_9", reply(404, {"message": "no such thing"}))
    assert await read_or_none(
        ctx, "read", "/v1/things/th_1", Thing, headers=HEADERS, refusals=refusals
    ) == Thing(id="th_1", amount=5)
    assert (
        await read_or_none(ctx, "read", "/v1/things/th_9", Thing, headers=HEADERS, refusals=refusals) is None
    )


async def test_read_or_none_refuses_another_4xx(ctx: ConnectorContext, fake: FakeProvider) -> None:
    fake.on("GET", "/v1/things/th_1", reply(403, {"message": "wrong key"}))
    with pytest.raises(ProviderRejected, match="read refused: wrong key") as refused:
        await read_or_none(ctx, "read", "/v1/things/th_1", Thing, headers=HEADERS, refusals=refusals)
    assert refused.value.status_code == 403


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (reply(200, raw=b"<html>"), "read: unparseable answer (HTTP 200)"),
        (reply(503, {"message": "down"}), "read: provider answered 503"),
        (broken(), "read: network error (ConnectError)"),
    ],
)
async def test_a_garbage_or_failed_answer_leaves_the_outcome_unknown(
    ctx: ConnectorContext, fake: FakeProvider, answer: Handler, reason: str
) -> None:
    fake.handler = answer
    for reading in (
        read_or_none(ctx, "read", "/v1/things/th_1", Thing, headers=HEADERS, refusals=refusals),
        call(ctx, "read", "GET", "/v1/things/th_1", Thing, headers=HEADERS, refusals=refusals),
    ):
        with pytest.raises(ProviderUnavailable) as unknown:
            await reading
        assert not isinstance(unknown.value, ProviderRejected)
        assert unknown.value.reason == reason
