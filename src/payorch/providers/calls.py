"""One provider call and its answer, the way every adapter makes most of them (docs/providers.md,
"Writing an adapter"): send it (``http.send``: a timeout, a network error or a 5xx is
ProviderUnavailable), expect the statuses the provider answers on success, and parse the body
into the provider's wire model (an unparseable body is ProviderUnavailable too). Any other answer
is classified by the provider's ``Refusals``.

``read_or_none`` is a read whose 404 means "the provider knows no such object": None, not an
error. A call whose other answers mean something of their own (a 422 that says "read it back")
uses ``http.send`` and classifies what is left with ``Refusals``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from payorch.providers.base import ConnectorContext
from payorch.providers.http import parse, send
from payorch.providers.refusals import Refusals

M = TypeVar("M", bound=BaseModel)
OK = frozenset({200})


async def call(
    ctx: ConnectorContext,
    operation: str,
    method: str,
    path: str,
    model: type[M],
    *,
    headers: Mapping[str, str],
    refusals: Refusals,
    ok: frozenset[int] = OK,
    json: Any = None,
    params: Mapping[str, str] | None = None,
    content: bytes | None = None,
) -> M:
    """The answer as ``model`` when its status is one of ``ok``; any other is refused."""
    response = await send(
        ctx, operation, method, path, headers=headers, json=json, params=params, content=content
    )
    if response.status_code not in ok:
        raise refusals(operation, response)
    return parse(model, response, operation, refusals.provider)


async def read_or_none(
    ctx: ConnectorContext,
    operation: str,
    path: str,
    model: type[M],
    *,
    headers: Mapping[str, str],
    refusals: Refusals,
    params: Mapping[str, str] | None = None,
) -> M | None:
    """One object read with GET; None when the provider knows no such object (404)."""
    response = await send(ctx, operation, "GET", path, headers=headers, params=params)
    if response.status_code == 404:
        return None
    if response.status_code not in OK:
        raise refusals(operation, response)
    return parse(model, response, operation, refusals.provider)
