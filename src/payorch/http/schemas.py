"""The API's error body (docs/api.md, Errors), as a model for the OpenAPI document, and the
integer type of request bodies."""

from typing import Any

from pydantic import BaseModel, BeforeValidator


def _whole_number(value: object) -> object:
    # JSON has one number type: 33.0 is the integer 33 (as the document's `integer` says), 33.5 is
    # still refused by the strict integer check.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# URLs as the document states them: http(s), a host (ASCII, no user information), an optional
# port, then printable ASCII. ``HTTP_URL_PATTERN`` is enforced as stated (return_url);
# ``WEBHOOK_URL_PATTERN`` (no fragment) is the text a webhook URL needs before the rules that
# depend on the environment and on DNS (payorch.webhooks.urls), which no pattern can state.
_ORIGIN = r"^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9._~%!$&'()*+,;=-]+(:[0-9]{1,5})?"
HTTP_URL_PATTERN = _ORIGIN + r"([/?#][!-~]*)?$"
WEBHOOK_URL_PATTERN = _ORIGIN + r'([/?][!"$-~]*)?$'


# Every integer field of a request body: a JSON number with a zero fraction is that integer. Put
# it after the field's Field(...) (``Annotated[int, Field(gt=0), WHOLE_NUMBER]``): before it, the
# bounds would reach the document as unknown keywords instead of minimum/maximum.
WHOLE_NUMBER = BeforeValidator(_whole_number)


class ErrorBody(BaseModel):
    code: str
    message: str
    request_id: str
    details: dict[str, Any]


class ErrorEnvelope(BaseModel):
    error: ErrorBody
