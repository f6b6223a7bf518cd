"""A span per API request: installed by create_app only while tracing is on (tracing.py).

The span continues the caller's trace (``traceparent``) and is named after the route template
FastAPI matched ("POST /v1/payment-intents"), never the raw path: ids in paths and tokens in
query strings (a provider's return carries one) stay out of traces. Its attributes: method,
route, status, the caller's application id and the request id of the logs.
"""

from __future__ import annotations

from opentelemetry.trace import SpanKind
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from payorch.http.context import in_process, route_template
from payorch.observability import tracing
from payorch.observability.middleware import KNOWN_METHODS


class TracingMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or in_process(scope):
            await self.app(scope, receive, send)
            return
        method = scope["method"] if scope["method"] in KNOWN_METHODS else "_OTHER"
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
        status = 500  # if nothing is sent, the server answers 500

        async def send_and_note_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        with tracing.tracer.start_as_current_span(
            method,
            context=tracing.incoming_context(headers),
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method},
            record_exception=False,  # an exception's text is not vetted for secrets
            set_status_on_exception=False,
        ) as span:
            try:
                await self.app(scope, receive, send_and_note_status)
            except BaseException as exc:
                tracing.failed(span, type(exc).__name__)
                raise
            finally:
                route = route_template(scope)
                span.update_name(f"{method} {route}")
                span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status)
                state = scope.get("state", {})
                # Set by the authentication dependency (http/deps.py) once the key was checked.
                application_id = getattr(state.get("caller"), "application_id", None)
                if application_id is not None:
                    span.set_attribute("payorch.application_id", application_id)
                if "request_id" in state:
                    span.set_attribute("payorch.request_id", state["request_id"])
                if status >= 500:
                    tracing.failed(span, str(status))
