"""A query parameter that takes one value, given more than once, is a 400 on every route.

FastAPI reads a repeated single-valued parameter as its last value (``format=csv&format=jsonl``
exports JSON lines), so a client's mistake, or a proxy that appends a parameter, passes
silently. Which parameters take one value is read once per route from its signature (the query
parameters of its dependencies, the fields of a query model; a ``list[...]`` one takes several),
and the route's ASGI app is wrapped to refuse a repeat before anything else of the route runs:
400 VALIDATION_ERROR naming each repeated parameter (docs/api.md, "Strict queries").
"""

from __future__ import annotations

import types
from collections import Counter
from collections.abc import Iterable, Iterator, MutableSequence, MutableSet, Sequence, Set
from typing import Annotated, Union, get_args, get_origin
from urllib.parse import parse_qsl

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from payorch.errors import ValidationFailed

_MANY = (list, tuple, set, frozenset, Sequence, MutableSequence, Set, MutableSet)


def _takes_many(annotation: object) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _takes_many(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_takes_many(arg) for arg in get_args(annotation))
    return (origin or annotation) in _MANY


def _model(annotation: object) -> type[BaseModel] | None:
    """The query model of an ``Annotated[SomeQuery, Query()]`` parameter, else None."""
    if get_origin(annotation) is Annotated:
        return _model(get_args(annotation)[0])
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _query_names(dependant: Dependant) -> Iterator[tuple[str, bool]]:
    """Each query parameter of ``dependant`` and of its dependencies, all the way down: its name
    on the wire and whether it takes several values."""
    for field in dependant.query_params:
        annotation = field.field_info.annotation
        model = _model(annotation)
        if model is None:
            yield field.alias, _takes_many(annotation)
            continue
        for name, info in model.model_fields.items():
            yield info.alias or name, _takes_many(info.annotation)
    for dependency in dependant.dependencies:
        yield from _query_names(dependency)


def single_valued(route: APIRoute) -> frozenset[str]:
    """The query parameters of ``route`` that take one value."""
    return frozenset(name for name, many in _query_names(route.dependant) if not many)


class RefuseRepeats:
    """A route's ASGI app, behind a check that none of ``names`` is given twice."""

    def __init__(self, app: ASGIApp, names: frozenset[str]) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query: bytes = scope.get("query_string", b"")
        if b"&" in query:  # one parameter alone cannot repeat
            # Read as Starlette's QueryParams reads it (latin-1, blank values kept).
            counts = Counter(name for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True))
            _refuse_repeated(counts, self.names)
        await self.app(scope, receive, send)


def _refuse_repeated(counts: Counter[str], names: Iterable[str]) -> None:
    repeated = sorted(name for name in names if counts[name] > 1)
    if repeated:
        raise ValidationFailed.listing(
            [(name, f"Given {counts[name]} times; this parameter takes one value.") for name in repeated]
        )


def each_once(params: QueryParams) -> dict[str, str]:
    """``params`` as a dict, none given twice (else the same 400): for a page that reads its
    query itself, into a form whose every field takes one value."""
    counts = Counter(name for name, _ in params.multi_items())
    _refuse_repeated(counts, counts)
    return dict(params)


def refuse_repeats(route: APIRoute) -> None:
    """Put the check in front of ``route``'s app (once: a router may be mounted in two apps)."""
    names = single_valued(route)
    if names and not isinstance(route.app, RefuseRepeats):
        route.app = RefuseRepeats(route.app, names)
