"""Simulated provider C's wire: bracket-nested form bodies in, the provider's errors out."""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Iterable

from payorch.jsontypes import JsonObject

BASE = "/simulator/provider_c"
PAGE_PATH = BASE + "/c/pay/{session_id}"
_KEY = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])*)$")
_ALPHABET = string.ascii_letters + string.digits


def new_object_id(prefix: str, length: int = 24) -> str:
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))


class SimCWireError(Exception):
    """An answer in the provider's error shape: ``{"error": {"type", "code", "message", "param"}}``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type_: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body: JsonObject = {"error": {"type": type_, "code": code, "message": message, "param": param}}


def missing(kind: str, object_id: str, param: str = "id") -> SimCWireError:
    return SimCWireError(404, f"No such {kind}: '{object_id}'", code="resource_missing", param=param)


def _listed(node: object) -> object:
    """Dicts whose keys are all indexes become lists, in index order."""
    if isinstance(node, dict):
        inner = {key: _listed(value) for key, value in node.items()}
        if inner and all(key.isdigit() for key in inner):
            return [inner[key] for key in sorted(inner, key=int)]
        return inner
    return node


def parse_form(pairs: Iterable[tuple[str, str]]) -> JsonObject:
    """``line_items[0][quantity]=1&expand[]=x`` -> ``{"line_items": [{"quantity": "1"}], "expand": ["x"]}``.
    Values stay strings; a malformed key is a 400 naming it."""
    root: dict[str, object] = {}
    for key, value in pairs:
        match = _KEY.match(key)
        if match is None:
            raise SimCWireError(400, f"Invalid parameter name: {key[:80]}", code="parameter_invalid")
        parts = [match.group(1), *re.findall(r"\[([^\[\]]*)\]", match.group(2))]
        node = root
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if part == "":
                part = str(len(node))  # expand[]=a&expand[]=b
            if last:
                if isinstance(node.get(part), dict):
                    raise SimCWireError(400, f"Invalid parameter: {key[:80]}", param=key[:80])
                node[part] = value
            else:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    raise SimCWireError(400, f"Invalid parameter: {key[:80]}", param=key[:80])
                node = child
    listed = _listed(root)
    assert isinstance(listed, dict)
    return listed


def text(body: JsonObject, name: str, *, required: bool = False, limit: int = 5000) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise SimCWireError(400, f"Missing required param: {name}.", code="parameter_missing", param=name)
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise SimCWireError(400, f"Invalid string: {name}", code="parameter_invalid", param=name)
    return value


def integer(value: object, name: str, *, minimum: int = 0) -> int:
    if not isinstance(value, str) or not value.isdigit() or len(value) > 15 or int(value) < minimum:
        raise SimCWireError(400, f"Invalid integer: {name}", code="parameter_invalid_integer", param=name)
    return int(value)


def string_map(value: object, name: str) -> dict[str, str]:
    """``metadata``: at most 50 keys of short strings."""
    if value is None or value == "":
        return {}
    if not isinstance(value, dict) or len(value) > 50:
        raise SimCWireError(400, f"Invalid hash: {name}", code="parameter_invalid", param=name)
    out: dict[str, str] = {}
    for key, inner in value.items():
        if not isinstance(inner, str) or len(key) > 40 or len(inner) > 500:
            raise SimCWireError(400, f"Invalid {name}[{key[:40]}]", code="parameter_invalid", param=name)
        out[key] = inner
    return out
