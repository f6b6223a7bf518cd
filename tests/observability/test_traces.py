"""OpenTelemetry traces of a whole sandbox payment, as a collector receives them.

A real OTLP/HTTP receiver (POST /v1/traces, protobuf, decoded with opentelemetry-proto) and a
webhook receiver; `payorch serve` (API and worker) with the OTEL_ variables pointing at the
first. One payment: create (the caller's `traceparent`), checkout, the buyer approving on the
simulator's page by a form post, the return, and the worker's webhook deliveries. The spans:

- the create's server span continues the caller's trace; its event's webhook attempt is a CHILD
  (parented, same trace id) of a span of that request, and the receiver's `traceparent` header
  names the attempt's span: create -> webhook attempt is one trace;
- the provider calls are client spans with provider, operation, mode, outcome and status;
- no key, secret or credential anywhere in what was exported (the raw protobuf is searched).
"""

from __future__ import annotations

import gzip
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urljoin

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

from payorch.crypto import Cipher
from payorch.providers.registry import REGISTRATIONS
from tests.databases import own_database
from tests.kit import TEST_SECRET_KEY, intent_body
from tests.live import as_sandbox, create_sandbox, live_server, payorch_env, run_cli
from tests.webhooks.receiver import serve_receiver

pytestmark = pytest.mark.slow

database_url = own_database  # the worker delivers every due webhook of its database

CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"
FORM_ACTION = re.compile(r'<form[^>]*method="post"[^>]*action="([^"]*)"', re.IGNORECASE)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')


@dataclass(frozen=True)
class Received:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, object]
    service: str


@dataclass
class Collector:
    url: str
    spans: list[Received] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)  # every export, raw (the secrets search)

    def named(self, prefix: str) -> list[Received]:
        return [s for s in self.spans if s.name.startswith(prefix)]

    def wait_for(self, check: str, ready: object, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not callable(ready) or not ready():
            if time.monotonic() > deadline:
                names = sorted({s.name for s in self.spans})
                raise AssertionError(f"no {check} in {timeout} s; spans so far: {names}")
            time.sleep(0.1)


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@contextmanager
def otlp_receiver() -> Iterator[Collector]:
    collector = Collector("")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            request = ExportTraceServiceRequest.FromString(body)
            with lock:
                collector.bodies.append(body)
                for resource_spans in request.resource_spans:
                    resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            collector.spans.append(
                                Received(
                                    span.name,
                                    span.trace_id.hex(),
                                    span.span_id.hex(),
                                    span.parent_span_id.hex(),
                                    span.kind,
                                    {a.key: _value(a.value) for a in span.attributes},
                                    str(resource.get("service.name")),
                                )
                            )
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    collector.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield collector
    finally:
        server.shutdown()
        server.server_close()


def traced_body(app: dict[str, str]) -> dict[str, object]:
    return intent_body(as_sandbox(app), external_reference="order-traced", amount=1990)


async def pay_on_the_page(client: httpx.AsyncClient, checkout: dict[str, object]) -> str:
    """The buyer: open the simulator's page, press approve (a form post), follow the redirect to
    the return (which answers 303 to the shop). Answers the provider's token sent on the way."""
    url, method, fields = str(checkout["url"]), checkout["method"], checkout["fields"] or {}
    assert isinstance(fields, dict)
    no_key = {"Authorization": ""}  # a browser
    if method == "POST":
        page = await client.post(url, data=fields, headers=no_key)
    else:
        page = await client.get(url, headers=no_key)
    assert page.status_code == 200 and 'name="outcome"' in page.text, page.text[:300]
    action = FORM_ACTION.search(page.text)
    hidden = dict(HIDDEN.findall(page.text))
    chosen = await client.post(
        urljoin(str(page.url), action.group(1) if action else ""),
        data={**hidden, "outcome": "approve"},
        headers=no_key,
    )
    assert chosen.status_code == 303, chosen.text[:300]
    back = await client.get(chosen.headers["location"], headers=no_key)  # the buyer's return
    assert back.status_code == 303, back.text[:300]
    return str(hidden.get("token_ws") or fields.get("token_ws") or "")


async def test_a_payment_and_its_webhooks_are_traced_without_secrets(database_url: str) -> None:
    with otlp_receiver() as collector:
        async with serve_receiver() as hooks:
            env = payorch_env(
                database_url,
                OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
                OTEL_SERVICE_NAME="payorch-traces-test",
                OTEL_BSP_SCHEDULE_DELAY="50",
            )
            app = create_sandbox(env)
            headers = {"Authorization": f"Bearer {app['api_key']}"}
            caller = {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"}
            with live_server(env) as base:
                async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
                    endpoint = await client.post(
                        "/v1/admin/webhook-endpoints", json={"url": hooks.url("/hook")}
                    )
                    assert endpoint.status_code == 201, endpoint.text
                    body = endpoint.json()
                    webhook_secret = (body.get("data") or body)["secret"]
                    intent = await client.post(
                        "/v1/payment-intents",
                        json=traced_body(app),
                        headers=caller,
                    )
                    assert intent.status_code == 201, intent.text
                    intent_id = intent.json()["id"]
                    checkout = await client.post(
                        f"/v1/payment-intents/{intent_id}/checkout", json={"provider": "auto"}, headers=caller
                    )
                    assert checkout.status_code == 200, checkout.text
                    token = await pay_on_the_page(client, checkout.json()["checkout"])
                    read = await client.get(f"/v1/payment-intents/{intent_id}")
                    assert read.json()["status"] == "AUTHORIZED", read.text
                    await hooks.wait_for(2, timeout=30)  # created, then authorized
                # The attempts of both events, exported by the worker.
                collector.wait_for(
                    "two webhook attempt spans", lambda: len(collector.named("webhook attempt")) >= 2
                )
                collector.wait_for(
                    "the return's span",
                    lambda: any("checkout-returns" in s.name for s in collector.named("GET ")),
                )

    spans = collector.spans
    by_id = {s.span_id: s for s in spans}
    assert {s.service for s in spans} == {"payorch-traces-test"}

    # The create: a server span continuing the caller's trace, with route, status, application.
    create = next(s for s in spans if s.name == "POST /v1/payment-intents")
    assert (create.trace_id, create.parent_id, create.kind) == (
        CALLER_TRACE,
        CALLER_SPAN,
        ProtoSpan.SPAN_KIND_SERVER,
    )
    assert create.attributes["http.route"] == "/v1/payment-intents"
    assert create.attributes["http.response.status_code"] == 201
    assert create.attributes["payorch.application_id"] == app["application_id"]
    # Its database phase, under it.
    phases = [s for s in spans if s.name.startswith("db ") and s.trace_id == CALLER_TRACE]
    assert phases and all(
        s.attributes["payorch.db.phase"] in {"transaction", "reading", "each_statement", "one_statement"}
        for s in phases
    ), [s.name for s in phases]

    # The webhook attempt of the create's event: parented under the create (same trace), and
    # the receiver was told the attempt's span.
    def ancestors(span: Received) -> list[str]:
        chain = []
        while span.parent_id in by_id:
            span = by_id[span.parent_id]
            chain.append(span.name)
        return chain

    attempts = collector.named("webhook attempt")
    in_create_trace = [s for s in attempts if s.trace_id == CALLER_TRACE]
    assert in_create_trace, f"no webhook attempt in the create's trace: {attempts}"
    created_attempt = in_create_trace[0]
    assert "POST /v1/payment-intents" in ancestors(created_attempt)
    assert created_attempt.kind == ProtoSpan.SPAN_KIND_CLIENT
    assert created_attempt.attributes["payorch.webhook.endpoint_id"] == (body.get("data") or body)["id"]
    assert created_attempt.attributes["http.response.status_code"] == 200
    assert created_attempt.attributes["payorch.webhook.outcome"] == "succeeded"
    assert isinstance(created_attempt.attributes["payorch.webhook.duration_ms"], int)
    sent = {r.headers["traceparent"] for r in hooks.requests}
    assert f"00-{CALLER_TRACE}-{created_attempt.span_id}-01" in sent
    # The authorization's event came from the buyer's return (a browser sends no traceparent):
    # its attempt is in the return's trace.
    returned = next(s for s in spans if s.name.startswith("GET ") and "checkout-returns" in s.name)
    assert any(s.trace_id == returned.trace_id and s is not created_attempt for s in attempts)

    # The provider calls: client spans with provider, operation, mode, outcome and status.
    calls = collector.named("provider ")
    assert calls
    for call in calls:
        assert call.kind == ProtoSpan.SPAN_KIND_CLIENT
        assert call.attributes["payorch.provider.mode"] == "MOCK"
        assert call.attributes["payorch.provider.outcome"] == "ok"
        assert 200 <= int(str(call.attributes["http.response.status_code"])) < 300
        assert call.attributes["payorch.provider"] in {r.provider_id for r in REGISTRATIONS}
        assert call.attributes["payorch.provider.operation"]
        assert (
            call.name
            == f"provider {call.attributes['payorch.provider']} {call.attributes['payorch.provider.operation']}"
        )
    checkout_request = next(
        s for s in spans if s.name == "POST /v1/payment-intents/{payment_intent_id}/checkout"
    )
    assert any(s.parent_id == checkout_request.span_id for s in calls), "the checkout asks the provider"
    assert any(s.trace_id == returned.trace_id for s in calls), "the return asks the provider"

    # No secret anywhere in what was exported.
    cipher = Cipher([TEST_SECRET_KEY])
    mock = {
        f"{r.provider_id} MOCK {name}": value
        for r in REGISTRATIONS
        for name, value in r.mock_credentials(cipher, app["application_id"]).items()
        if value != app["application_id"]  # provider A's commerce code is the application id
    }
    secrets = {
        "API key": app["api_key"],
        "webhook secret": webhook_secret,
        "PAYORCH_SECRET_KEY": TEST_SECRET_KEY,
        "provider token": token,
        **mock,
    }
    assert all(secrets.values()), secrets
    exported = b"".join(collector.bodies)
    found = [label for label, value in secrets.items() if value.encode() in exported]
    assert not found, f"exported spans carry: {found}"


async def test_an_endpoint_with_the_exporter_none_exports_nothing(database_url: str) -> None:
    with otlp_receiver() as collector:
        env = payorch_env(
            database_url,
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
            OTEL_TRACES_EXPORTER="none",
            OTEL_BSP_SCHEDULE_DELAY="50",
        )
        app = create_sandbox(env)
        with live_server(env, "--no-worker") as base:
            answer = httpx.post(
                base + "/v1/payment-intents",
                json=traced_body(app),
                headers={
                    "Authorization": f"Bearer {app['api_key']}",
                    "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01",
                },
            )
            assert answer.status_code == 201, answer.text
            time.sleep(1)  # 20 export periods
        assert collector.bodies == []


def test_an_exporter_other_than_otlp_stops_the_start(database_url: str) -> None:
    env = payorch_env(
        database_url,
        OTEL_EXPORTER_OTLP_ENDPOINT="http://collector.invalid:4318",
        OTEL_TRACES_EXPORTER="zipkin",
    )
    done = run_cli(["worker"], env, timeout=60)
    assert done.returncode == 1
    assert "OTEL_TRACES_EXPORTER=zipkin: payorch exports over OTLP (otlp) or not at all (none)" in done.stderr
