"""Where a change came from: the request's client address, User-Agent and request id, set once
per request by the outermost middleware (payorch.http.context) and read by ``record`` when a
change names no origin of its own. Outside a request (the worker's jobs, the command line) every
field is None."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar, Token
from typing import Any

from payorch.activity.records import Origin
from payorch.ratelimit.limiter import client_address

USER_AGENT_MAX = 512  # the columns' sizes: a longer value is cut, never refused
REQUEST_ID_MAX = 64  # (the API takes request ids of up to 128 characters)

NO_ORIGIN = Origin()
_origin_var: ContextVar[Origin | None] = ContextVar("activity_origin", default=None)


def current_origin() -> Origin:
    """The origin of the request being served; all None outside a request."""
    return _origin_var.get() or NO_ORIGIN


def origin_of(scope: Mapping[str, Any], headers: Mapping[bytes, bytes], request_id: str) -> Origin:
    """The origin of an ASGI request: its peer's address (proxy headers are not trusted, as for
    the rate limits: payorch.ratelimit.limiter.client_address) and its User-Agent."""
    agent = headers.get(b"user-agent")
    return Origin(
        ip=client_address(scope) if scope.get("client") else None,
        user_agent=agent.decode("latin-1")[:USER_AGENT_MAX] if agent else None,
        request_id=request_id[:REQUEST_ID_MAX],
    )


def enter(origin: Origin) -> Token[Origin | None]:
    """Sets the request's origin; pass the token to ``leave`` when the request ends."""
    return _origin_var.set(origin)


def leave(token: Token[Origin | None]) -> None:
    _origin_var.reset(token)
