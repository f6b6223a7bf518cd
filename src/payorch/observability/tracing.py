"""OpenTelemetry traces: off unless an OTLP endpoint is configured (docs/deployment.md, "Traces").

Configured by the standard variables only. On when ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, unless ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none``; spans go over OTLP/HTTP (protobuf) through the SDK's batch
processor. The SDK reads the rest itself: ``OTEL_SERVICE_NAME`` (default here: payorch),
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER`` and ``OTEL_TRACES_SAMPLER_ARG``,
``OTEL_BSP_*``, ``OTEL_EXPORTER_OTLP_*_HEADERS``, ``_TIMEOUT``, ``_COMPRESSION``.

Off (the default), ``enabled`` stays False and ``tracer`` the API's no-op tracer: every seam
that makes a span tests ``tracing.enabled`` once and goes its untraced way, and the request span's
middleware and the traced phases (traced_phases.py) are not even installed.

No attribute carries a key, secret, credential, URL or body: routes are templates, providers
and endpoints are named by id (tests/observability/test_traces.py searches every attribute).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from payorch import __version__

# Set once per process by ``configure``; read by every seam (``tracing.enabled``, not imported by
# name, so the seams see the configured value).
enabled = False
tracer: Tracer = trace.NoOpTracer()

# The trace context stored with an event and sent with its webhooks is W3C's ``traceparent``
# whatever OTEL_PROPAGATORS says: the column and the header are named after it.
_W3C = TraceContextTextMapPropagator()
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_PROTOCOLS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` turns tracing on (module docstring)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return any(environ.get(name, "").strip() for name in _ENDPOINTS)


def configuration_error(environ: Mapping[str, str] = os.environ) -> str | None:
    """What is wrong with the OTEL_ variables for payorch, or None (checked before a start)."""
    if not wanted(environ):
        return None
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter not in ("", "otlp"):
        return f"OTEL_TRACES_EXPORTER={exporter}: payorch exports over OTLP (otlp) or not at all (none)"
    for name in _PROTOCOLS:
        protocol = environ.get(name, "").strip()
        if protocol not in ("", "http/protobuf"):
            return f"{name}={protocol}: payorch sends traces over OTLP/HTTP (http/protobuf)"
    return None


def configure(environ: Mapping[str, str] = os.environ) -> bool:
    """Turn tracing on for this process if ``environ`` asks for it (idempotent); answer whether
    it is on. Called where a process starts serving (after uvicorn's fork, in the worker), so the
    batch processor's thread belongs to the process that makes the spans."""
    global enabled, tracer
    if enabled or not wanted(environ):
        return enabled
    error = configuration_error(environ)
    if error is not None:
        raise ValueError(error)
    # Imported here: a process without tracing never loads the SDK or the exporter.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.version": __version__})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "payorch"}))
    provider = TracerProvider(resource=resource)  # the sampler from OTEL_TRACES_SAMPLER
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    tracer = provider.get_tracer("payorch", __version__)
    enabled = True
    return True


def incoming_context(headers: Mapping[str, str]) -> Context:
    """The caller's trace context (``traceparent``, by the configured propagators)."""
    from opentelemetry import propagate

    return propagate.extract(headers)


def current_traceparent() -> str | None:
    """The current span's ``traceparent``, to store with an event (None when tracing is off)."""
    if not enabled:
        return None
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier.get("traceparent")


def traceparent_of(span: Span) -> str | None:
    carrier: dict[str, str] = {}
    _W3C.inject(carrier, context=trace.set_span_in_context(span))
    return carrier.get("traceparent")


def failed(span: Span, error_type: str) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(StatusCode.ERROR)


@contextmanager
def webhook_attempt(
    *, traceparent: str | None, endpoint_id: str, delivery_id: str, event_id: str, number: int
) -> Iterator[Span]:
    """The span of one webhook attempt, a child of the span that wrote its event (the event's
    stored ``traceparent``): one trace from the request to its webhooks. Without a stored one
    (written while tracing was off) the attempt starts a trace of its own."""
    parent = _W3C.extract({"traceparent": traceparent}) if traceparent else None
    with tracer.start_as_current_span(
        "webhook attempt",
        context=parent,
        kind=SpanKind.CLIENT,
        attributes={
            "payorch.webhook.endpoint_id": endpoint_id,
            "payorch.webhook.delivery_id": delivery_id,
            "payorch.event_id": event_id,
            "payorch.webhook.attempt": number,
        },
        record_exception=False,  # an exception's text is not vetted for secrets
        set_status_on_exception=False,  # nor is it put in the status's description
    ) as span:
        yield span


def webhook_attempt_ended(
    span: Span, outcome: str, duration_ms: int, status: int | None, *, succeeded: bool
) -> None:
    """What one webhook attempt came to, on its span."""
    span.set_attribute("payorch.webhook.outcome", outcome)
    span.set_attribute("payorch.webhook.duration_ms", duration_ms)
    if status is not None:
        span.set_attribute("http.response.status_code", status)
    if not succeeded:
        failed(span, outcome)


@contextmanager
def provider_call(provider: str, operation: str, mode: str, connector_id: str) -> Iterator[Span]:
    """The span of one call to a provider's API; providers/http.py notes its outcome
    (``provider_outcome``) where it times the call for /metrics."""
    with tracer.start_as_current_span(
        f"provider {provider} {operation}",
        kind=SpanKind.CLIENT,
        attributes={
            "payorch.provider": provider,
            "payorch.provider.operation": operation,
            "payorch.provider.mode": mode,
            "payorch.connector_id": connector_id,
        },
        record_exception=False,
        set_status_on_exception=False,  # the outcome says what failed
    ) as span:
        yield span


def provider_outcome(outcome: str, status_code: int | None, failure: bool) -> None:
    """Note the current provider call's outcome (ok, timeout, network, http_5xx, http_4xx,
    error) and HTTP status on its span."""
    span = trace.get_current_span()
    span.set_attribute("payorch.provider.outcome", outcome)
    if status_code is not None:
        span.set_attribute("http.response.status_code", status_code)
    if failure:
        failed(span, outcome)
