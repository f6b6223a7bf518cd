"""The operator's `payments capture` and `payments void` of a held payment (capture_method
manual; docs/payments.md, "Holds: capture and void").

The payment id names its application: the command reads the payment by id alone, then calls the
one service of holds (payorch.payments.holds) with that application as the caller
(admin_cli.operator_caller), so the API's rules and refusals apply and the activity log records
the action by "system". The amount is typed as people type it (payorch.amount_text: `1,000.50`
USD, `15,000` CLP); none captures all that is held. The command calls the provider itself, with
a Runtime of its own (MOCK connectors reach the simulator in-process). A refusal is one line on
stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING

from payorch.admin_cli import command, json_flag, operator_caller, run
from payorch.config import Settings

if TYPE_CHECKING:
    from payorch.auth.service import Caller
    from payorch.db import Phases
    from payorch.idempotency.records import IdempotentResult
    from payorch.jsontypes import JsonObject
    from payorch.payments.records import Payment

CAPTURE, VOID = "capture", "void"


def add_hold_commands(payment_actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    capture = command(
        payment_actions,
        CAPTURE,
        "capture a held payment (REQUIRES_CAPTURE), all of it or part",
        description=(
            "Capture a held payment, as POST /v1/payments/{id}/capture does: --amount as people"
            " type it (1,000.50 USD; 15,000 CLP), or all that is held without it. Less than all:"
            " the provider releases the rest. Prints what was captured and released."
        ),
    )
    capture.add_argument("payment_id", metavar="PAYMENT_ID", help="pay_... (the intent's payment.id)")
    capture.add_argument("--amount", help="as people type it: 1,000.50 (unset: all that is held)")
    json_flag(capture)
    capture.set_defaults(handler=_capture)

    void = command(
        payment_actions,
        VOID,
        "void a held payment: release the hold (the intent ends CANCELLED)",
        description=(
            "Release a held payment without capturing it, as POST /v1/payments/{id}/void does:"
            " nothing is charged and its intent ends CANCELLED."
        ),
    )
    void.add_argument("payment_id", metavar="PAYMENT_ID", help="pay_... (the intent's payment.id)")
    json_flag(void)
    void.set_defaults(handler=_void)


def _capture(settings: Settings, args: argparse.Namespace) -> int:
    body = _moved(settings, CAPTURE, args.payment_id, args.amount)
    if args.json:
        print(json.dumps(body))
        return 0
    currency = str(body["currency"])
    said = f"payorch: captured {_written(body['amount_captured'], currency)} of {body['id']}"
    if body["amount_released"]:
        said += f" ({_written(body['amount_released'], currency)} released to the buyer)"
    print(f"{said}; intent {body['payment_intent_id']} is AUTHORIZED")
    return 0


def _void(settings: Settings, args: argparse.Namespace) -> int:
    body = _moved(settings, VOID, args.payment_id, None)
    if args.json:
        print(json.dumps(body))
        return 0
    released = _written(body["amount_released"], str(body["currency"]))
    intent = body["payment_intent_id"]
    print(f"payorch: voided {body['id']} ({released} released to the buyer); intent {intent} is CANCELLED")
    return 0


def _written(amount: object, currency: str) -> str:
    from payorch.amount_text import written

    assert isinstance(amount, int)
    return written(amount, currency)


def _moved(settings: Settings, action: str, payment_id: str, amount_text: str | None) -> JsonObject:
    """The payment after ``action``, through payorch.payments.holds (an ApiError propagates).
    What can be refused without the provider is refused first, before the Runtime (and the app
    it imports, seconds on a busy machine) is built."""
    from payorch.composition import build_runtime
    from payorch.payments import holds

    found, caller, amount = run(settings, lambda phases: _checked(phases, action, payment_id, amount_text))

    async def call() -> JsonObject | IdempotentResult:
        runtime = build_runtime(settings)
        try:
            if action == VOID:
                return await holds.void_payment(runtime.phases, runtime, caller, found.id, None)
            return await holds.capture_payment(runtime.phases, runtime, caller, found.id, amount, None)
        finally:
            await runtime.close()

    moved = asyncio.run(call())
    assert isinstance(moved, dict)  # no idempotency key: never a stored replay
    return moved


async def _checked(
    phases: Phases, action: str, payment_id: str, amount_text: str | None
) -> tuple[Payment, Caller, int | None]:
    """The payment, its application as the caller, and the amount read as people type it."""
    from payorch.amount_text import UnreadableAmount, read_amount
    from payorch.errors import CaptureAmountExceeded, ValidationFailed
    from payorch.payment_text import over_capture
    from payorch.payments.hold_repository import HELD
    from payorch.payments.service import find_payment, no_payment

    async with phases.reading() as conn:
        found = await find_payment(conn, payment_id)
        if found is None:
            raise no_payment(payment_id)
        caller = await operator_caller(conn, found.application_id)
    if action == VOID or amount_text is None:
        return found, caller, None
    try:
        amount = read_amount(amount_text, found.currency)
    except UnreadableAmount as refused:
        raise ValidationFailed.field("amount", str(refused)) from None
    if found.status == HELD and amount > found.amount_capturable:
        # Said in the currency's format; the service's check (in minor units) stays for races.
        capturable = {"amount_capturable": found.amount_capturable}
        raise CaptureAmountExceeded(over_capture(amount, found), capturable)
    return found, caller, amount
