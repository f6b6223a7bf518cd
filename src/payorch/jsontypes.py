"""Names for JSON-shaped values, so records and repositories say what they hold instead of Any.

A JSON column (metadata, provider_data, event data) is read back as a ``JsonObject``; code that
only reads one passes it on as a ``Mapping[str, object]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TypeAlias

import orjson
from pydantic import JsonValue, TypeAdapter

from payorch.clock import isoformat

JsonObject: TypeAlias = dict[str, object]
_JSON_VALUES: TypeAdapter[dict[str, JsonValue]] = TypeAdapter(dict[str, JsonValue])


def json_values(data: JsonObject) -> dict[str, JsonValue]:
    """A JSON object as an event payload's field wants it: each value checked to be JSON."""
    return _JSON_VALUES.validate_python(data)


def dumps(data: object) -> bytes:
    """JSON bytes as payorch writes them everywhere (answers, stored results, events): orjson's."""
    return orjson.dumps(data)


def json_fields(record: object, names: Iterable[str]) -> JsonObject:
    """The named fields of a record as a response body's values, in that order: datetimes as
    ISO 8601 UTC (clock.isoformat), tuples as lists, the rest as they are."""
    return {name: _json_value(getattr(record, name)) for name in names}


def _json_value(value: object) -> object:
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, tuple):
        return list(value)
    return value
