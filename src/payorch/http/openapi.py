"""The OpenAPI document as the service really answers: errors in the API's shape, never 422;
the bearer key where it is asked for; operations named for what they do.

FastAPI documents a 422 `HTTPValidationError` on every operation that takes input; this service
answers validation failures with 400 VALIDATION_ERROR in the API's error shape, so the
document is corrected once, when first built. The same pass adds what FastAPI cannot see
(payorch.http.openapi_terms): the bearer security scheme on the operations whose endpoint
authenticates, the endpoint function's name as the operation id, `format: date-time` on
timestamps (pre-formatted strings) and the error codes; and the ``webhooks`` section,
every event and its payload (payorch.events.catalogue_openapi). Last, the values documented to
grow become open strings in answers and notices (payorch.http.openapi_growing).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from payorch.events.catalogue_openapi import add_webhooks
from payorch.http.openapi_growing import open_growing_values
from payorch.http.openapi_terms import add_terms
from payorch.http.schemas import ErrorEnvelope

_ERROR_REF = "#/components/schemas/ErrorEnvelope"


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
            )
            terms = add_terms(add_webhooks(_corrected(document)), app.routes)
            app.openapi_schema = open_growing_values(terms)
        return app.openapi_schema

    # FastAPI documents replacing this method to customise the document; its stub declares a
    # method, so mypy refuses the assignment.
    app.openapi = openapi  # type: ignore[method-assign]


def _corrected(document: dict[str, Any]) -> dict[str, Any]:
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    envelope = ErrorEnvelope.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, definition in envelope.pop("$defs", {}).items():
        schemas.setdefault(name, definition)
    schemas.setdefault("ErrorEnvelope", envelope)
    error_content = {"application/json": {"schema": {"$ref": _ERROR_REF}}}
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            _never_null_body(operation)
            _no_nul_in_input(operation, schemas)
            responses = operation["responses"]
            default_422 = "HTTPValidationError" in str(responses.get("422", ""))
            if default_422:
                del responses["422"]
            if default_422 and "400" not in responses:
                responses["400"] = {"description": "VALIDATION_ERROR", "content": error_content}
            # Every operation can meet these, whatever it declares.
            responses.setdefault("500", {"description": "INTERNAL_ERROR", "content": error_content})
    return document


# The edge refuses a NUL character anywhere in a path, query or body (400), so every input string
# without a stricter pattern of its own says so.
NO_NUL = r"^[^\x00]*$"


def _no_nul_in_input(operation: dict[str, Any], schemas: dict[str, Any]) -> None:
    seen: set[str] = set()
    for parameter in operation.get("parameters", []):
        if parameter.get("in") in ("path", "query"):
            _no_nul(parameter.get("schema", {}), schemas, seen)
    for media in operation.get("requestBody", {}).get("content", {}).values():
        _no_nul(media.get("schema", {}), schemas, seen)


def _no_nul(schema: object, schemas: dict[str, Any], seen: set[str]) -> None:
    if isinstance(schema, list):
        for item in schema:
            _no_nul(item, schemas, seen)
        return
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        name = ref.rsplit("/", 1)[1]
        if name not in seen:
            seen.add(name)
            _no_nul(schemas.get(name), schemas, seen)
        return
    if schema.get("type") == "string" and not {"pattern", "enum", "const"} & set(schema):
        schema["pattern"] = NO_NUL
    if isinstance(schema.get("additionalProperties"), dict):  # a map: its keys are input too
        names = schema.setdefault("propertyNames", {})
        names.setdefault("pattern", NO_NUL)
    for key in ("anyOf", "oneOf", "allOf", "items", "additionalProperties"):
        _no_nul(schema.get(key), schemas, seen)
    _no_nul(list(schema.get("properties", {}).values()), schemas, seen)


def _never_null_body(operation: dict[str, Any]) -> None:
    """An optional body (``body: Model | None = None``) is documented by FastAPI as the model or
    null; the service refuses a JSON null (FlowCall.optional_body), so the document shows the
    object only, in a body that is not required."""
    for media in operation.get("requestBody", {}).get("content", {}).values():
        schema = media.get("schema", {})
        branches = [b for b in schema.get("anyOf", []) if b != {"type": "null"}]
        if "anyOf" in schema and len(branches) == 1:
            media["schema"] = branches[0]
