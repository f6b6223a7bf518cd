"""A call of this service to itself (payorch.http.client.OutgoingClient) builds the ASGI scope
directly instead of going through httpx's request building and ASGITransport. The app must see
the same request and the caller the same answer as through httpx's own way, for every shape of
call our code makes; any other call still goes httpx's way."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from payorch.http.client import LocalApp, OutgoingClient, _InProcess
from payorch.http.context import IN_PROCESS, request_id_var
from tests.kit import refused_address

# Never dialled (the calls stay in the process): a name that cannot resolve, so no service
# running on this machine (`make run` on 8000) can answer in its place.
PUBLIC = "http://payorch.test:8601"
SCOPE_KEYS = (
    "type",
    "asgi",
    "http_version",
    "method",
    "scheme",
    "path",
    "raw_path",
    "query_string",
    "server",
    "client",
    "root_path",
    IN_PROCESS,
)


async def echo(scope: Scope, receive: Receive, send: Send) -> None:
    """Answers with what it received; a path under /crash fails before or after answering."""
    body = b""
    while True:
        message: Message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    if scope["path"] == "/crash/before":
        raise RuntimeError("before the answer")
    seen = {key: scope.get(key) for key in SCOPE_KEYS}
    seen["headers"] = sorted([k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"])
    seen["state"] = scope.get("state")
    seen["body"] = body.decode("utf-8")
    raw = json.dumps(seen, default=_plain).encode()
    headers = [(b"content-type", b"application/json"), (b"set-cookie", b"a=1"), (b"set-cookie", b"b=2")]
    await send({"type": "http.response.start", "status": 201, "headers": headers})
    if scope["path"] == "/crash/after":
        raise RuntimeError("after the answer began")
    await send({"type": "http.response.body", "body": raw[:10], "more_body": True})
    await send({"type": "http.response.body", "body": raw[10:]})


def clients() -> tuple[OutgoingClient, httpx.AsyncClient]:
    ours = OutgoingClient(PUBLIC, LocalApp(echo), timeout=5)
    transport = httpx.ASGITransport(app=_InProcess(echo), raise_app_exceptions=False)
    theirs = httpx.AsyncClient(transport=transport, timeout=5, follow_redirects=False)
    return ours, theirs


CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/simulator/b/v1/payments/search?a=1&b=x%20y", {}),
    ("GET", "/simulator/b/v1/payments/search", {"params": {"q": "a b", "n": "1", "ñ": "ü/&"}}),
    ("POST", "/simulator/b/checkout/preferences", {"json": {"a": 1, "ñ": "ü", "list": [1.5, None]}}),
    (
        "POST",
        "/v1/provider-notifications/b/cfg_1?data.id=123&type=payment",
        {
            "content": b'{"id": 1}',
            "headers": {"Content-Type": "application/json", "x-signature": "ts=1,v1=ab"},
        },
    ),
    (
        "PUT",
        "/simulator/a/rswebpay/transactions/tok%2Fen",
        {"json": {"x": "y"}, "headers": {"Tbk-Api-Key-Id": "k"}},
    ),
    ("POST", "/simulator/a/rswebpay/transactions/t/refunds", {}),
    ("GET", "/simulator/b/v1/payments/1", {"headers": {"User-Agent": "mine", "Accept": "application/json"}}),
    ("DELETE", "/v1/x", {"headers": {"Authorization": "Bearer pay_sb_x"}}),
]


@pytest.mark.parametrize(("method", "path", "options"), CALLS)
async def test_a_direct_call_is_the_call_httpx_would_make(
    method: str, path: str, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ours, theirs = clients()
    token = request_id_var.set("req_calling")
    try:
        expected = await theirs.request(method, PUBLIC + path, **options)
        # The direct way never reaches httpx's send.
        monkeypatch.setattr(httpx.AsyncClient, "send", _refuse)
        got = await ours.request(method, PUBLIC + path, **options)
    finally:
        request_id_var.reset(token)
    assert got.status_code == expected.status_code == 201
    assert got.json() == expected.json()
    assert got.json()["state"] == {"request_id": "req_calling"}
    assert got.headers.multi_items() == expected.headers.multi_items()
    assert got.content == expected.content
    assert got.request.method == method and str(got.request.url) == str(expected.request.url)


async def test_get_and_post_take_the_direct_way(monkeypatch: pytest.MonkeyPatch) -> None:
    ours, _ = clients()
    monkeypatch.setattr(httpx.AsyncClient, "send", _refuse)
    assert (await ours.get(PUBLIC + "/v1/x", params={"a": "1"})).json()["query_string"] == "a=1"
    assert (await ours.post(PUBLIC + "/v1/x", content=b"hi")).json()["body"] == "hi"


@pytest.mark.parametrize("where", ["before", "after"])
async def test_an_app_that_fails_answers_as_through_httpx(where: str) -> None:
    ours, theirs = clients()
    expected = await theirs.post(f"{PUBLIC}/crash/{where}", json={})
    got = await ours.post(f"{PUBLIC}/crash/{where}", json={})
    assert got.status_code == expected.status_code == (500 if where == "before" else 201)
    assert got.content == expected.content == b""


@pytest.mark.parametrize(
    ("url", "options"),
    [
        (PUBLIC + "/v1/x", {"data": {"field": "value"}}),  # a form
        (PUBLIC + "/v1/x?a=1", {"params": {"b": "2"}}),  # a query to merge
        ("REFUSED/v1/x", {}),  # another origin, where nothing listens
        (PUBLIC + "/v1/x", {"auth": ("user", "secret")}),
    ],
)
async def test_other_calls_go_httpx_s_way(url: str, options: dict[str, Any]) -> None:
    ours, _ = clients()
    sent: list[httpx.Request] = []
    original = httpx.AsyncClient.send

    async def spy(self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        sent.append(request)
        return await original(self, request, **kwargs)

    with pytest.MonkeyPatch.context() as patch, refused_address() as address:
        patch.setattr(httpx.AsyncClient, "send", spy)
        refused = url.startswith("REFUSED")
        with pytest.raises(httpx.ConnectError) if refused else _nothing():
            await ours.post(url.replace("REFUSED", f"http://{address}"), **options)
    assert len(sent) == 1


def _plain(value: object) -> object:
    """bytes and tuples of the scope, as JSON can hold them."""
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"not in a scope: {value!r}")


async def _refuse(*_args: object, **_kwargs: object) -> httpx.Response:
    raise AssertionError("went through httpx's send")


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None
