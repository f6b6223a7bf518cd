"""Provider B's wire rules: request checks, amounts, and the API's error bodies.

Amounts travel as decimal numbers (``1500``, ``10.5``); we keep them as integer hundredths.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

from payorch.jsontypes import JsonObject
from payorch.money import exponent
from payorch.simulator.bodies import json_body
from payorch.simulator.provider_b.records import CheckedPreference

BASE = "/simulator/provider_b"
PAGE_PATH = BASE + "/checkout/v1/redirect"  # the checkout page (a preference's init_point)
SITE_ID = "MLC"
DEFAULT_CURRENCY = "CLP"  # the site's currency when items name none
SEARCH_MAX_LIMIT = 1000


def collector_of(owner: str) -> int:
    """A stable numeric collector (seller) id per application."""
    return 100_000_000 + int(hashlib.sha256(owner.encode()).hexdigest()[:8], 16) % 900_000_000


def json_object(value: object) -> JsonObject:
    """``value`` if it is a JSON object, else an empty one (for optional nested fields)."""
    return value if isinstance(value, dict) else {}


class SimBWireError(Exception):
    """An error answer: ``{"message", "error", "status", "cause"}``."""

    def __init__(
        self,
        status: int,
        message: str,
        error: str = "bad_request",
        cause: list[JsonObject] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error = error
        self.cause = cause or []

    def body(self) -> JsonObject:
        return {
            "message": self.message,
            "error": self.error,
            "status": self.status,
            "cause": self.cause,
        }


def not_found(what: str) -> SimBWireError:
    return SimBWireError(
        404,
        f"{what} not found",
        "not_found",
        [{"code": 2000, "description": f"{what} not found", "data": None}],
    )


_NOT_A = {"json": "JSON parse error: the body is not valid JSON", "object": "The body must be a JSON object"}


def parse_body(raw: bytes) -> JsonObject:
    def loads(body: bytes) -> object:
        return json.loads(body, parse_float=Decimal)

    return json_body(raw, lambda not_a: SimBWireError(400, _NOT_A[not_a], "bad_request"),
                     empty={}, loads=loads)


def hundredths(value: object, *, currency: str, field: str, error: str = "bad_request") -> int:
    """A positive amount with at most the currency's decimals (and never more than two)."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal, float)):
        raise SimBWireError(400, f"{field} invalid", error)
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise SimBWireError(400, f"{field} invalid", error) from None
    places = min(exponent(currency) or 0, 2)
    scaled = number * (10**places)
    if (
        not number.is_finite()
        or number <= 0
        or scaled != scaled.to_integral_value()
        or number > 10**13
    ):
        raise SimBWireError(400, f"{field} invalid", error)
    return int(scaled) * int(10 ** (2 - places))


def amount_out(value: int) -> int | float:
    """Hundredths back to the API's number: 150000 -> 1500, 1050 -> 10.5."""
    return value // 100 if value % 100 == 0 else float(Decimal(value) / 100)


def _json_number(value: object) -> object:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _json_number(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_number(v) for v in value]
    return value


def _url(value: object, field: str, message: str | None = None) -> str:
    if (
        not isinstance(value, str)
        or len(value) > 600
        or not value.startswith(("http://", "https://"))
    ):
        raise SimBWireError(400, message or f"{field} invalid", "invalid_" + field.split(".")[0])
    return value


def _date(value: object, field: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise SimBWireError(400, f"{field} invalid", "invalid_" + field) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


# Fields of a preference the client controls (kept as given, once checked).
PREFERENCE_FIELDS = (
    "items",
    "back_urls",
    "auto_return",
    "external_reference",
    "notification_url",
    "expires",
    "expiration_date_from",
    "expiration_date_to",
    "metadata",
    "payer",
    "payment_methods",
    "statement_descriptor",
    "binary_mode",
    "marketplace",
    "additional_info",
)


def check_preference(data: JsonObject) -> CheckedPreference:
    """Validate a preference (create, or create merged with an update)."""
    items = data.get("items")
    if not isinstance(items, list) or not items:
        raise SimBWireError(400, "items needed", "invalid_items")
    currencies = set()
    total = 0
    kept_items = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise SimBWireError(400, f"items[{index}] invalid", "invalid_items")
        title = item.get("title")
        if not isinstance(title, str) or not title.strip() or len(title) > 256:
            raise SimBWireError(400, "title needed", "invalid_items")
        quantity = item.get("quantity")
        if (
            isinstance(quantity, bool)
            or not isinstance(quantity, int)
            or not 1 <= quantity <= 999_999
        ):
            raise SimBWireError(400, "quantity invalid", "invalid_items")
        currency = item.get("currency_id", DEFAULT_CURRENCY)
        if not isinstance(currency, str) or exponent(currency) is None:
            raise SimBWireError(400, "currency_id invalid", "invalid_items")
        currencies.add(currency)
        price = hundredths(
            item.get("unit_price"), currency=currency, field="unit_price", error="invalid_items"
        )
        total += price * quantity
        kept_items.append({**item, "currency_id": currency})
    if len(currencies) > 1:
        raise SimBWireError(400, "currency_id must be the same for all items", "invalid_items")
    back_urls = data.get("back_urls") or {}
    if not isinstance(back_urls, dict):
        raise SimBWireError(400, "back_urls invalid", "invalid_back_urls")
    for name, value in back_urls.items():
        if name not in ("success", "failure", "pending"):
            raise SimBWireError(400, f"back_urls.{name} invalid", "invalid_back_urls")
        if value not in (None, ""):
            _url(value, f"back_urls.{name}")
    auto_return = data.get("auto_return")
    if auto_return not in (None, "", "approved", "all"):
        raise SimBWireError(400, "auto_return invalid", "invalid_auto_return")
    if auto_return and not back_urls.get("success"):
        raise SimBWireError(
            400, "auto_return invalid. back_url.success must be defined", "invalid_auto_return"
        )
    reference = data.get("external_reference")
    if reference is not None and (not isinstance(reference, str) or len(reference) > 256):
        raise SimBWireError(400, "external_reference invalid", "invalid_external_reference")
    if data.get("notification_url") not in (None, ""):
        _url(
            data["notification_url"],
            "notification_url",
            "notification_url attribute must be url valid",
        )
    expires = data.get("expires", False)
    if not isinstance(expires, bool):
        raise SimBWireError(400, "expires invalid", "invalid_expires")
    date_from = _date(data.get("expiration_date_from"), "expiration_date_from")
    date_to = _date(data.get("expiration_date_to"), "expiration_date_to")
    if date_from and date_to and date_to < date_from:
        raise SimBWireError(
            400,
            "expiration_date_to must not be before expiration_date_from",
            "invalid_expiration_date_to",
        )
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        raise SimBWireError(400, "metadata invalid", "invalid_metadata")
    kept: JsonObject = {k: data[k] for k in PREFERENCE_FIELDS if k in data}
    kept.update(items=kept_items, back_urls=back_urls, expires=expires, metadata=metadata)
    return CheckedPreference(
        body={k: _json_number(v) for k, v in kept.items()},
        external_reference=reference,
        currency_id=currencies.pop(),
        amount_hundredths=total,
        expires=expires,
        expiration_date_from=date_from,
        expiration_date_to=date_to,
    )
