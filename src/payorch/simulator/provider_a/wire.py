"""Provider A's wire rules: request bodies, field checks and error bodies, as the real API."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from payorch.jsontypes import JsonObject
from payorch.simulator.bodies import json_body

TOKEN_SECONDS = 5 * 60  # a token lives 5 minutes after create
# An approved transaction not committed within this long after the buyer's choice is reversed
# (docs/simulator.md, "Provider A": the window's length is the simulator's choice).
COMMIT_WINDOW_SECONDS = 10 * 60
STATUS_DAYS = 7  # status is available for 7 days
REVERSAL_SECONDS = 3 * 3600  # a full refund within 3 hours is a reversal
REFUND_DAYS = 90
HOLD_DAYS = 7  # a deferred-capture authorization is held this long, then lapses
CREDIT_TYPES = frozenset({"VN", "VC", "SI", "S2", "NC"})  # payment_type_code of credit cards

BUY_ORDER = re.compile(r"^[A-Za-z0-9|_=&%.,~:/?\[+!@()>\-]{1,26}$")
CREATE_FIELDS = ("buy_order", "session_id", "amount", "return_url")


class SimAWireError(Exception):
    """An answer of the provider other than success: HTTP status and ``error_message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def body(self) -> dict[str, str]:
        return {"error_message": self.message}


@dataclass(frozen=True, slots=True)
class SimACreateRequest:
    """The checked fields of a create."""

    buy_order: str
    session_id: str
    amount: int
    return_url: str


def parse_object(raw: bytes, allowed: tuple[str, ...]) -> JsonObject:
    """The JSON object of a request; 400 for bad JSON or a field the operation does not take."""
    data = json_body(raw, lambda _: SimAWireError(400, "Invalid json format"), empty={})
    for key in data:
        if key not in allowed:
            raise SimAWireError(400, f"Invalid json format: unexpected field '{key}'")
    return data


def _text(data: JsonObject, name: str, max_length: int) -> str:
    value = data.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise SimAWireError(422, f"{name} is required!")
    if not isinstance(value, str) or len(value) > max_length:
        raise SimAWireError(422, f"Invalid value for parameter: {name}")
    return value


def amount_of(value: object) -> int:
    """An integer amount of at most 17 digits; the SDKs send it as a number or a numeric string."""
    if value is None:
        raise SimAWireError(422, "amount is required!")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise SimAWireError(422, "Invalid value for parameter: amount")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise SimAWireError(422, "Invalid value for parameter: amount") from None
    if not number.is_finite() or number != number.to_integral_value() or number <= 0:
        raise SimAWireError(422, "Invalid value for parameter: amount")
    amount = int(number)
    if len(str(amount)) > 17:
        raise SimAWireError(422, "Invalid value for parameter: amount")
    return amount


def parse_create(raw: bytes) -> SimACreateRequest:
    data = parse_object(raw, CREATE_FIELDS)
    buy_order = _text(data, "buy_order", 26)
    if not BUY_ORDER.match(buy_order):
        raise SimAWireError(422, "Invalid value for parameter: buy_order")
    session_id = _text(data, "session_id", 61)
    amount = amount_of(data.get("amount"))
    return_url = _text(data, "return_url", 255)
    if not return_url.startswith(("http://", "https://")):
        raise SimAWireError(422, "Invalid value for parameter: return_url")
    return SimACreateRequest(buy_order, session_id, amount, return_url)


def parse_refund(raw: bytes) -> int:
    return amount_of(parse_object(raw, ("amount",)).get("amount"))


@dataclass(frozen=True, slots=True)
class SimACaptureRequest:
    """The checked fields of a deferred capture."""

    buy_order: str
    authorization_code: str
    capture_amount: int


def parse_capture(raw: bytes) -> SimACaptureRequest:
    data = parse_object(raw, ("buy_order", "authorization_code", "capture_amount"))
    buy_order = _text(data, "buy_order", 26)
    authorization_code = _text(data, "authorization_code", 6)
    value = data.get("capture_amount")
    if value is None:
        raise SimAWireError(422, "capture_amount is required!")
    try:
        amount = amount_of(value)
    except SimAWireError:
        raise SimAWireError(422, "Invalid value for parameter: capture_amount") from None
    return SimACaptureRequest(buy_order, authorization_code, amount)
