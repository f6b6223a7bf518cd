"""The API's error body (docs/api.md, Errors), as a model for the OpenAPI document."""

from typing import Any

from pydantic import BaseModel


class ErrorBody(BaseModel):
    code: str
    message: str
    request_id: str
    details: dict[str, Any]


class ErrorEnvelope(BaseModel):
    error: ErrorBody
