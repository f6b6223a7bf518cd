"""The outgoing HTTP client shared by a process (provider adapters, simulator notifications).

URLs under PAYORCH_PUBLIC_URL are this service itself (simulator routes, provider-notification
endpoint): they are dispatched in-process through ASGI instead of the network, so MOCK mode
works whatever the public address is, in tests and behind a load balancer. Everything else
goes over a pooled network connection.

A call to ourselves the way our code makes them (a URL under the public URL as text, headers,
JSON or bytes, query parameters) skips httpx's request building and ASGITransport: the client
builds the ASGI scope itself (``OutgoingClient``): less CPU a call (bench/in_process_call.py;
docs/performance-decisions.md, "In-process calls without httpx's request building"). The scope and the
answer are those httpx's ASGITransport gives (tests/http/test_in_process_calls.py compares
them); any other call (form data, files, cookies, auth, another origin) goes httpx's way, in
process all the same.
"""

from __future__ import annotations

import asyncio
import functools
import re
import ssl
from collections.abc import Callable, Mapping
from json import dumps as json_dumps
from typing import Any
from urllib.parse import urlencode

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from payorch.http.context import IN_PROCESS, request_id_var


class LocalApp:
    """The ASGI app of this process, for in-process calls to our own routes.

    Bound once: ``create_app`` binds the app it builds (the first one wins); a process that
    serves no API (the worker) gets one from ``fallback`` on first use. It lives outside the
    Runtime's module so that the runtime never imports the app.
    """

    def __init__(self, app: ASGIApp | None = None) -> None:
        self._app = app
        self._fallback: Callable[[], ASGIApp] | None = None

    def bind(self, app: ASGIApp) -> None:
        if self._app is None:
            self._app = app

    def fallback(self, build: Callable[[], ASGIApp]) -> None:
        """How to build the app if nothing bound one before the first in-process call."""
        self._fallback = build

    def get(self) -> ASGIApp:
        if self._app is None:
            if self._fallback is None:
                raise RuntimeError("no ASGI app is bound for in-process calls")
            self._app = self._fallback()
        return self._app


class _InProcess:
    """Marks each scope as an in-process call, under the calling request's id."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[IN_PROCESS] = True
        scope.setdefault("state", {})["request_id"] = request_id_var.get()
        await self.app(scope, receive, send)


@functools.cache
def _verifying_context() -> ssl.SSLContext:
    """httpx's default TLS verification (certifi's CAs), built once per process and shared by
    every runtime's client: loading the CA bundle is most of what building a client costs."""
    return httpx.create_ssl_context()


class SelfDispatchTransport(httpx.AsyncBaseTransport):
    def __init__(self, public_url: str, local_app: LocalApp) -> None:
        parsed = httpx.URL(public_url)
        self._origin = (parsed.scheme, parsed.host, parsed.port)
        self._local_app = local_app
        self._local: httpx.ASGITransport | None = None
        self._network = httpx.AsyncHTTPTransport(retries=0, verify=_verifying_context())

    def _is_self(self, url: httpx.URL) -> bool:
        return (url.scheme, url.host, url.port) == self._origin

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._is_self(request.url):
            if self._local is None:
                # An error in the app is a 500 answer, as over the network (the edge's
                # last-resort 500 is skipped in process).
                self._local = httpx.ASGITransport(
                    app=_InProcess(self._local_app.get()), raise_app_exceptions=False
                )
            return await self._local.handle_async_request(request)
        return await self._network.handle_async_request(request)

    async def aclose(self) -> None:
        await self._network.aclose()


# What a direct call may carry besides headers, json, content and params: each left as the
# client's default (httpx's get/post pass them all, unset).
_UNSET = {
    "data": None,
    "files": None,
    "cookies": None,
    "auth": httpx.USE_CLIENT_DEFAULT,
    "follow_redirects": httpx.USE_CLIENT_DEFAULT,
    "extensions": None,
}
_WITH_BODY = ("POST", "PUT", "PATCH")
# A path httpx's URL keeps as it is (nothing to quote or decode, no query): the scope's path is
# the text itself, with no URL parsed (docs/performance.md, "Instructions per payment").
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9/_.~-]*")


class _Answer(httpx.Response):
    """The answer of a direct call, read. Its ``request`` (httpx's, as ASGITransport's answer has
    one) is built when first asked for: building it parses the URL, which an adapter never reads.
    (httpx's own reading of the body names the request only for its errors' sake: none there.)"""

    def __init__(
        self, status: int, headers: list[tuple[bytes, bytes]], body: bytes, call: tuple[str, str]
    ) -> None:
        self._call = call
        self._reading = True
        # A stream, not content=: httpx adds no Content-Length of its own to the answer then.
        super().__init__(status, headers=headers, stream=httpx.ByteStream(body))
        self.read()  # as httpx's client reads every answer that is not streamed
        self._reading = False

    @property
    def _request(self) -> httpx.Request | None:
        if self.__dict__.get("_reading", False):
            return None
        built: httpx.Request | None = self.__dict__.get("_built")
        if built is None:
            built = self.__dict__["_built"] = httpx.Request(*self._call)
        return built

    @_request.setter
    def _request(self, value: httpx.Request | None) -> None:
        if value is not None:
            self.__dict__["_built"] = value


class OutgoingClient(httpx.AsyncClient):
    """httpx's client, calling this service itself directly (module docstring)."""

    def __init__(self, public_url: str, local_app: LocalApp, timeout: float) -> None:
        super().__init__(
            transport=SelfDispatchTransport(public_url, local_app),
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
        )
        parsed = httpx.URL(public_url)
        self._own_origin = f"{parsed.scheme}://{parsed.netloc.decode('ascii')}"
        self._own_server = (parsed.host, parsed.port)
        self._scheme = parsed.scheme
        self._host = (b"host", parsed.netloc)
        self._default_headers = [(k.lower(), v) for k, v in self.headers.raw]
        self._local_app = local_app
        self._app: ASGIApp | None = None

    async def request(self, method: str, url: httpx.URL | str, **options: Any) -> httpx.Response:
        if not self._direct(url, options):
            return await super().request(method, url, **options)
        return await self._call_ourselves(
            method.upper(),  # as httpx's Request
            str(url),
            options.get("headers"),
            options.get("json"),
            options.get("content"),
            options.get("params"),
        )

    def _direct(self, url: httpx.URL | str, options: Mapping[str, Any]) -> bool:
        if not isinstance(url, str) or not url.startswith(self._own_origin):
            return False
        path = url[len(self._own_origin) :]
        if not path.startswith("/") or "#" in path or (options.get("params") and "?" in path):
            return False  # no path, a fragment, a query to merge: httpx's way
        content, headers, params = options.get("content"), options.get("headers"), options.get("params")
        return (
            all(options.get(name, unset) is unset for name, unset in _UNSET.items())
            and (content is None or isinstance(content, bytes))
            and (headers is None or isinstance(headers, dict))
            and (params is None or _text_values(params))
            and not (content is not None and options.get("json") is not None)
        )

    async def _call_ourselves(
        self,
        method: str,
        url: str,
        headers: dict[str, str] | None,
        json: object,
        content: bytes | None,
        params: dict[str, str] | None,
    ) -> httpx.Response:
        # httpx encodes parameters with urlencode too; its URL then quotes as it would (and keeps
        # what urlencode writes as it is).
        query = urlencode(params) if params else ""
        full = f"{url}?{query}" if query else url
        path = url[len(self._own_origin) :]
        if _PLAIN_PATH.fullmatch(path):
            raw_path, query_string = path.encode("ascii"), query.encode("ascii")
        else:
            target = httpx.URL(full)
            path, raw_path, query_string = target.path, target.raw_path.split(b"?")[0], target.query
        body = content or b""
        extra: list[tuple[bytes, bytes]] = []
        if json is not None:
            body = json_dumps(json, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
            extra = [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
        elif content is not None:
            extra = [(b"content-length", str(len(body)).encode())]
        # The client's headers, each replaced by the call's own of that name, then the call's others.
        given = {k.lower().encode(): v.encode() for k, v in (headers or {}).items()}
        merged = [(k, given.pop(k, v)) for k, v in self._default_headers] + list(given.items())
        length = [(b"content-length", b"0")] if method in _WITH_BODY and not extra else []
        names = {name for name, _ in merged}
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "headers": [self._host, *length, *merged, *((k, v) for k, v in extra if k not in names)],
            "scheme": self._scheme,
            "path": path,
            "raw_path": raw_path,
            "query_string": query_string,
            "server": self._own_server,
            "client": ("127.0.0.1", 123),  # as httpx's ASGITransport
            "root_path": "",
        }
        status, answer_headers, answer_body = await _dispatch(self._in_process_app(), scope, body, method)
        return _Answer(status, answer_headers, answer_body, (method, full))

    def _in_process_app(self) -> ASGIApp:
        if self._app is None:
            self._app = _InProcess(self._local_app.get())
        return self._app


def _text_values(params: object) -> bool:
    # httpx writes True as "true" and None as "": only text values are encoded the same way here.
    return isinstance(params, dict) and all(isinstance(value, str) for value in params.values())


async def _dispatch(
    app: ASGIApp, scope: Scope, body: bytes, method: str
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Run ``app`` for one request, as httpx's ASGITransport without raising the app's errors:
    an app that fails before it answers is a 500."""
    received = False
    complete = asyncio.Event()
    status: int | None = None
    headers: list[tuple[bytes, bytes]] = []
    parts: list[bytes] = []

    async def receive() -> Message:
        nonlocal received
        if received:
            await complete.wait()
            return {"type": "http.disconnect"}
        received = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            if chunk and method != "HEAD":
                parts.append(chunk)
            if not message.get("more_body", False):
                complete.set()

    try:
        await app(scope, receive, send)
    except Exception:  # noqa: BLE001 - as over the network: the app's failure is a 500 answer
        complete.set()
    return (500 if status is None else status), headers, b"".join(parts)


def build_client(public_url: str, local_app: LocalApp, timeout: float) -> httpx.AsyncClient:
    return OutgoingClient(public_url, local_app, timeout)
