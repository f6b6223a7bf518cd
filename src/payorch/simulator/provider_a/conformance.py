"""Provider A for the conformance kit (simulator/conformance.py): its return shapes, its books,
its statuses. It sends no notifications, and its page has no "in process" outcome."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Literal

import httpx

from payorch.crypto import Cipher
from payorch.providers.base import CheckoutRef, ConnectorContext, PaymentResult
from payorch.providers.provider_a import decline_codes, wire
from payorch.providers.provider_a.payment_results import result_of
from payorch.providers.provider_a.registration import REGISTRATION
from payorch.simulator.conformance import (
    Charges,
    DeclineCase,
    Documented,
    ForgedNotification,
    ForgedReturn,
    Money,
    PageOutcome,
    StatusCase,
    Visit,
    read_books,
    status_grid,
)
from payorch.simulator.provider_a.service import RESPONSE_CODES

# The browser's return shapes besides the normal end (token_ws alone): each says "not paid".
_UNPAID_SHAPES = {
    "abort_token_only": (wire.TBK_TOKEN,),
    "abort": (wire.TBK_TOKEN, wire.TBK_ORDEN_COMPRA, wire.TBK_ID_SESION),
    "timeout": (wire.TBK_ORDEN_COMPRA, wire.TBK_ID_SESION),
    "error_page": (wire.TOKEN_WS, wire.TBK_TOKEN),
}
_STATUSES = (
    wire.INITIALIZED,
    wire.AUTHORIZED,
    wire.REVERSED,
    wire.FAILED,
    wire.NULLIFIED,
    wire.PARTIALLY_NULLIFIED,
    wire.CAPTURED,
)
_METHODS: tuple[Literal["GET", "POST"], ...] = ("GET", "POST")


async def _transaction(http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> dict[str, object]:
    """The provider's status of the visit's token, read as the MOCK connector would."""
    keys = REGISTRATION.mock_credentials(cipher, visit.application_id)
    token = visit.checkout_fields[wire.TOKEN_WS]
    headers = {"Tbk-Api-Key-Id": keys["commerce_code"], "Tbk-Api-Key-Secret": keys["api_key"]}
    path = f"/simulator/{REGISTRATION.simulator_name}{wire.TRANSACTIONS}/{token}"
    return dict(await read_books(http, path, headers=headers))


# A deferred code's statuses that took nothing: held (AUTHORIZED), released or lapsed (REVERSED).
_NOT_TAKEN = (wire.AUTHORIZED, wire.REVERSED)


class ProviderADriver:
    # CLP: the only currency it takes.
    charges = Charges("CLP", amount=1500, part=500)
    page_outcomes: frozenset[PageOutcome] = frozenset({"approve", "reject", "cancel"})
    decline_retries_on_page = False

    async def returns(
        self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit, *, claims_paid: bool
    ) -> list[ForgedReturn]:
        token = visit.checkout_fields[wire.TOKEN_WS]
        if claims_paid:  # the normal end: "commit me"
            return [ForgedReturn(f"normal/{m}", m, {wire.TOKEN_WS: token}) for m in _METHODS]
        transaction = await _transaction(http, cipher, visit)
        values = {
            wire.TOKEN_WS: token,
            wire.TBK_TOKEN: token,
            wire.TBK_ORDEN_COMPRA: str(transaction["buy_order"]),
            wire.TBK_ID_SESION: str(transaction["session_id"]),
        }
        return [
            ForgedReturn(f"{shape}/{method}", method, {name: values[name] for name in names})
            for shape, names in _UNPAID_SHAPES.items()
            for method in _METHODS
        ]

    async def notifications(
        self,
        http: httpx.AsyncClient,
        cipher: Cipher,
        visit: Visit,
        *,
        claims_paid: bool,
        secret: str | None,
        now: datetime,
    ) -> list[ForgedNotification]:
        return []

    async def refunded(self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> int:
        transaction = await _transaction(http, cipher, visit)
        balance, amount = transaction["balance"], transaction["amount"]
        if visit.capture_method == "manual" and transaction["status"] in _NOT_TAKEN:
            return 0  # a hold (its balance is the hold's) or a released one: nothing refunded
        # No balance until a decided, authorized transaction: nothing refunded.
        return amount - balance if isinstance(amount, int) and isinstance(balance, int) else 0

    async def money(self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> Money:
        transaction = await _transaction(http, cipher, visit)
        status, balance = transaction["status"], transaction["balance"]
        amount = balance if isinstance(balance, int) else 0
        if status == wire.AUTHORIZED and visit.capture_method == "manual":
            return Money(held=amount, taken=0)  # a deferred code's approval: held, not taken
        if status in (wire.AUTHORIZED, wire.CAPTURED, wire.NULLIFIED, wire.PARTIALLY_NULLIFIED):
            return Money(held=0, taken=amount)
        return Money(held=0, taken=0)  # not approved, or released whole (REVERSED)

    def status_cases(self, ctx: ConnectorContext, checkout: CheckoutRef) -> list[StatusCase]:
        # Its meaning depends on the response code too: 0 approves, anything else refuses.
        codes = {f"response_code={code}": code for code in (0, -1)}
        return status_grid(lambda *at: _reader(ctx, checkout, *at), {s: s for s in _STATUSES}, codes)

    def unknown_status(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        return _reader(ctx, checkout, "PAYORCH_UNKNOWN", 0)()

    declines_not_simulated: Mapping[str, str] = {}

    def documented_declines(self) -> Mapping[str, Documented]:
        # A card's response code; an ending without a card names the status it confirmed
        # (FAILED, response code -1: nothing reached an issuer).
        rows = {
            str(code): Documented(str(code), row[0]) for code, row in decline_codes.RESPONSE_CODES.items()
        }
        return rows | {shape: Documented("FAILED/-1", row[0]) for shape, row in decline_codes.ENDINGS.items()}

    def decline_cases(self) -> list[DeclineCase]:
        codes = [DeclineCase(str(c), "reject", {"response_code": str(c)}) for c in RESPONSE_CODES]
        endings = {"error": "error", "aborted": "cancel", "timeout": "timeout"}  # row: the page's button
        return codes + [DeclineCase(row, button) for row, button in endings.items()]


def _reader(
    ctx: ConnectorContext, checkout: CheckoutRef, status: str, code: int
) -> Callable[[], PaymentResult]:
    answer = wire.TransactionStatus(
        status=status,
        amount=checkout.amount,
        buy_order=checkout.provider_data.get("buy_order"),
        response_code=code,
        authorization_code="1213" if code == 0 else None,
    )
    return lambda: result_of(ctx, checkout, answer)


DRIVER = ProviderADriver()
