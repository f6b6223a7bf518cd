"""A simulated provider's JSON request body, read the same way for every provider: the object it
must be, or the provider's own refusal (its words for "not JSON" and for "not an object")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal

from payorch.jsontypes import JsonObject

# What a body failed to be: "json" (it does not parse) or "object" (it parses to something else).
Failure = Literal["json", "object"]


def json_body(
    raw: bytes,
    refuse: Callable[[Failure], Exception],
    *,
    empty: JsonObject | None = None,
    loads: Callable[[bytes], object] = json.loads,
) -> JsonObject:
    """The JSON object ``raw`` is, parsed with the provider's ``loads``; ``refuse(failure)`` raised
    for anything else. An empty body is ``empty`` where the provider takes none (None: not JSON)."""
    if empty is not None and not raw.strip():
        return empty
    try:
        data = loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise refuse("json") from None
    if not isinstance(data, dict):
        raise refuse("object")
    return data
