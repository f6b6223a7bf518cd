"""What the OpenAPI document says that FastAPI cannot see in the models and routes.

- Security: the bearer scheme `ApiKey` on every operation whose endpoint authenticates (its
  dependencies include ``authenticate``, directly or through ``flow_call``), so /docs has an
  Authorize button and its "Try it out" sends the key; the other operations (returns, provider
  notifications, health, metrics) state that they take none.
- Scopes: each such operation names the scope it needs (payorch.access.operations), as the
  requirement's scope (``security: [{"ApiKey": ["payments:read"]}]``, OpenAPI 3.1) and as
  ``x-payorch-scope``, and answers 403 FORBIDDEN to a key without it.
- Operation ids: the endpoint function's name (``create_payment_intent``), not FastAPI's
  name-path-method default; the routes are mounted flat (http/routing.py), so the app's
  ``generate_unique_id_function`` never reaches them and the ids are set here. Two operations
  with one name are refused when the document is built.
- Timestamps: answers carry them as strings already formatted (clock.isoformat,
  ``2026-11-22T10:00:00.123Z``), so their models say ``str``; every such property (``at`` or
  ``..._at``) is stated as ``format: date-time``.
- Error codes: ``error.code`` is an enum of every ApiError's code.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from payorch.access.operations import required_scope
from payorch.errors import ApiError, Forbidden
from payorch.http.deps import authenticate, flow_call

SECURITY_SCHEME = "ApiKey"
_BEARER = {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "pay_sb_<prefix>_<secret> (SANDBOX) or pay_live_<prefix>_<secret> (PRODUCTION)",
    "description": (
        "An application's API key, sent as `Authorization: Bearer <API_KEY>`. A key made "
        "without scopes can do everything its application can, the administration paths "
        "included; a key with scopes only the operations whose scope (`x-payorch-scope`) it "
        "holds (403 FORBIDDEN, details.required_scope, otherwise). The simulator controls take "
        "a SANDBOX key (403 FORBIDDEN otherwise)."
    ),
}
_AUTHENTICATING = (authenticate, flow_call)
# Where the function's name alone would not say what the operation does.
_RENAMED = {"metrics_endpoint": "metrics"}


def add_terms(document: dict[str, Any], routes: Iterable[BaseRoute]) -> dict[str, Any]:
    components = document.setdefault("components", {})
    components.setdefault("securitySchemes", {})[SECURITY_SCHEME] = _BEARER
    named: dict[str, str] = {}
    done: set[int] = set()
    for route in routes:
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        operation_id = _RENAMED.get(route.name, route.name)
        methods = route.methods or set()
        where = f"{sorted(methods)} {route.path_format}"
        if named.setdefault(operation_id, where) != where:
            raise RuntimeError(f"operation id {operation_id} names {named[operation_id]} and {where}")
        secured = authenticates(route)
        path_item = document["paths"][route.path_format]
        for method in methods:
            operation = path_item.get(method.lower())
            if operation is None:
                continue
            operation["operationId"] = operation_id
            done.add(id(operation))
            operation["security"] = [{SECURITY_SCHEME: []}] if secured else []
            if secured:
                _scoped(operation, required_scope(method, route.path_format))
    for path, path_item in document["paths"].items():
        # A route inside an included router (FastAPI nests them) is not in ``routes``.
        if any(id(operation) not in done for operation in path_item.values()):
            raise RuntimeError(f"{path}: not on a route of the app's own (mount routers flat)")
    for schema in components.get("schemas", {}).values():
        _timestamps(schema)
    error_body = components.get("schemas", {}).get("ErrorBody")
    if error_body is not None:
        error_body["properties"]["code"]["enum"] = error_codes()
    return document


def _scoped(operation: dict[str, Any], scope: str | None) -> None:
    """State the operation's scope; one the table lacks states none (refused to every caller,
    and tests/access/test_operations.py names it)."""
    if scope is None:
        return
    operation["security"] = [{SECURITY_SCHEME: [scope]}]
    operation["x-payorch-scope"] = scope
    responses = operation["responses"]
    forbidden = responses.get("403")
    if forbidden is None:
        content = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
        responses["403"] = {"description": Forbidden.code, "content": content}


def error_codes() -> list[str]:
    """Every code an error answer can carry: those of ApiError and of all its subclasses in
    payorch (a test's own subclass is not one the service answers)."""
    found = {ApiError.code}
    pending = [ApiError]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub.__module__.startswith("payorch."):
                found.add(sub.code)
                pending.append(sub)
    return sorted(found)


def authenticates(route: APIRoute) -> bool:
    """Whether ``route``'s endpoint authenticates (``authenticate``, directly or through
    ``flow_call``): it then takes a key and needs a scope."""
    return any(call in _AUTHENTICATING for call in _calls(route.dependant))


def _calls(dependant: Dependant) -> Iterator[object]:
    yield dependant.call
    for sub in dependant.dependencies:
        yield from _calls(sub)


def _timestamps(schema: dict[str, Any]) -> None:
    for name, prop in schema.get("properties", {}).items():
        if name != "at" and not name.endswith("_at"):
            continue
        for branch in [prop, *prop.get("anyOf", [])]:
            if branch.get("type") == "string":
                branch.setdefault("format", "date-time")
