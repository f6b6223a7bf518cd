"""Values documented to grow are open strings in what the service answers (docs/api.md, "Values
that grow").

A client generated from the document turns an ``enum`` into a closed type and fails on a value
it does not know, but payorch adds error codes, payment error codes, event types, providers and
the like in minor releases. So, in every schema an answer or a notice uses, a property named in
GROWING is a plain string whose known values are listed in its description and ``examples``.
Requests keep their enums: what the service accepts is closed, and stated exactly.

A schema both a request and an answer use (a routing program's rules) is copied for the answers
as ``<Name>Answer``; the request keeps the original.
"""

from __future__ import annotations

import copy
from typing import Any

# Property name -> what its values name. Statuses, environments, modes, methods, outcomes and
# actions are not here: they are closed sets (a new one would be a breaking change).
GROWING: dict[str, str] = {
    "code": "codes",
    "type": "event types",
    "event_type": "event types",
    "failure_reason": "failure reasons",
    "disabled_reason": "reasons",
    "reason": "reasons",
    "kind": "kinds",
    "strategy": "strategies",
    "default": "strategies",
    "provider": "providers",
    "priority": "providers",
    "requested_provider": "providers",
}
_PREFIX = "#/components/schemas/"
_SUFFIX = "Answer"


def open_growing_values(document: dict[str, Any]) -> dict[str, Any]:
    schemas: dict[str, Any] = document.get("components", {}).get("schemas", {})
    requested = _requested(document, schemas)
    opener = _Opener(schemas, requested)
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict):
                opener.walk(operation.get("responses", {}))
    for path_item in document.get("webhooks", {}).values():
        for operation in path_item.values():
            opener.walk(operation.get("requestBody", {}))  # a notice: what payorch sends
    return document


def _requested(document: dict[str, Any], schemas: dict[str, Any]) -> set[str]:
    """The schemas a request's parameters or body use, directly or through others."""
    found: set[str] = set()
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict):
                _refs(operation.get("parameters", []), schemas, found)
                _refs(operation.get("requestBody", {}), schemas, found)
    return found


def _refs(node: object, schemas: dict[str, Any], found: set[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _refs(item, schemas, found)
    elif isinstance(node, dict):
        name = _ref_name(node)
        if name is not None and name not in found:
            found.add(name)
            _refs(schemas.get(name), schemas, found)
        for value in node.values():
            _refs(value, schemas, found)


def _ref_name(node: dict[str, Any]) -> str | None:
    ref = node.get("$ref")
    return ref[len(_PREFIX) :] if isinstance(ref, str) and ref.startswith(_PREFIX) else None


class _Opener:
    def __init__(self, schemas: dict[str, Any], requested: set[str]) -> None:
        self.schemas = schemas
        self.requested = requested
        self.done: set[str] = set()

    def walk(self, node: object) -> None:
        if isinstance(node, list):
            for item in node:
                self.walk(item)
            return
        if not isinstance(node, dict):
            return
        name = _ref_name(node)
        if name is not None:
            node["$ref"] = _PREFIX + self._answer_schema(name)
            return
        for prop, schema in node.get("properties", {}).items():
            if prop in GROWING and isinstance(schema, dict):
                self._open(schema, GROWING[prop])
        for key, value in node.items():
            if key != "properties":
                self.walk(value)
        self.walk(list(node.get("properties", {}).values()))

    def _answer_schema(self, name: str) -> str:
        """The schema an answer refers to: the original, or its copy when a request uses it and
        it holds a value that grows."""
        if name in self.requested and self._holds_growing(name, set()):
            answer = name + _SUFFIX
            if answer not in self.schemas:
                self.schemas[answer] = copy.deepcopy(self.schemas[name])
                self.schemas[answer]["title"] = answer  # a generator names its class by it
                self.done.add(answer)
                self.walk(self.schemas[answer])
            return answer
        if name not in self.done:
            self.done.add(name)
            self.walk(self.schemas.get(name))
        return name

    def _holds_growing(self, name: str, seen: set[str]) -> bool:
        if name in seen:
            return False
        seen.add(name)
        schema = self.schemas.get(name, {})
        if any(p in GROWING and _known(v, self.schemas) for p, v in schema.get("properties", {}).items()):
            return True
        found: set[str] = set()
        _refs(schema, {}, found)  # the names it refers to directly
        return any(self._holds_growing(other, seen) for other in found)

    def _open(self, schema: dict[str, Any], what: str) -> None:
        known = _known(schema, self.schemas)
        if not known:
            return
        _strip_enums(schema, self.schemas)
        listed = ", ".join(known)
        note = f"Known {what}: {listed}. More may be added: treat one you do not know as a new value."
        said = str(schema.get("description", "")).rstrip()
        schema["description"] = f"{said}{'' if not said or said.endswith('.') else '.'} {note}".lstrip()
        schema["examples"] = [known[0]] if schema.get("type") != "array" else [[known[0]]]


def _known(schema: object, schemas: dict[str, Any]) -> list[str]:
    """The enum's values anywhere in the property's schema (a $ref to an enum included)."""
    if isinstance(schema, list):
        return [value for item in schema for value in _known(item, schemas)]
    if not isinstance(schema, dict):
        return []
    name = _ref_name(schema)
    if name is not None:
        return _known(schemas.get(name), schemas)
    found = [str(value) for value in schema.get("enum", [])]
    for key in ("anyOf", "oneOf", "items"):
        found += _known(schema.get(key), schemas)
    return found


def _strip_enums(schema: dict[str, Any], schemas: dict[str, Any]) -> None:
    """The property's enum (or its $ref to an enum schema) becomes a plain string."""
    name = _ref_name(schema)
    if name is not None and "enum" in schemas.get(name, {}):
        del schema["$ref"]
        schema["type"] = "string"
    if "enum" in schema:
        del schema["enum"]
        schema["type"] = "string"
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key, []):
            _strip_enums(branch, schemas)
    if isinstance(schema.get("items"), dict):
        _strip_enums(schema["items"], schemas)
