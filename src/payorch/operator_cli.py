"""The operator's look-ups and repairs by id: `payments show <intent id>` and `webhooks retry
<delivery id>`, plus the `connectors` commands (connectors_cli.py).

An id names its application: the command reads the record by id alone, then calls the same
service functions as the API with that application as the caller (admin_cli.operator_caller),
so the API's rules and refusals apply (a succeeded delivery: one line, exit status 1).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from payorch.admin_cli import command, command_group, json_flag, operator_caller, run
from payorch.config import Settings
from payorch.connectors_cli import add_connector_commands
from payorch.errors import ResourceNotFound
from payorch.jsontypes import JsonObject

if TYPE_CHECKING:
    from payorch.db import Phases


def add_operator_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    payment_actions = command_group(commands, "payments", "look up payments")
    show = command(
        payment_actions,
        "show",
        "show a payment intent with its payment, refunds and timeline",
    )
    show.add_argument("intent_id", metavar="INTENT_ID", help="payi_... (the API's payment intent id)")
    json_flag(show)
    show.set_defaults(handler=_payments_show)

    webhook_actions = command_group(commands, "webhooks", "repair webhook deliveries")
    retry = command(
        webhook_actions,
        "retry",
        "attempt a delivery now, with a new schedule",
        description=(
            "Attempt a webhook delivery now with a new 7-attempt schedule, as the API's"
            " POST .../deliveries/{id}/retry does (its attempt history is kept; the worker"
            " sends it). A delivery that already succeeded is refused."
        ),
    )
    retry.add_argument("delivery_id", metavar="DELIVERY_ID", help="whd_... (a delivery's id)")
    retry.add_argument("--json", action="store_true", help="print the delivery as one JSON object")
    retry.set_defaults(handler=_webhooks_retry)

    add_connector_commands(commands)


def _payments_show(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.intents.schemas import intent_body
    from payorch.intents.service import find_intent, read_intent
    from payorch.payments.refunds import list_refunds
    from payorch.payments.schemas import payment_body, refund_body
    from payorch.payments.service import read_payment

    async def step(phases: Phases) -> JsonObject:
        async with phases.reading() as conn:
            found = await find_intent(conn, args.intent_id)
            if found is None:
                raise ResourceNotFound(f"No payment intent {args.intent_id}.")
            caller = await operator_caller(conn, found.application_id)
            detail = await read_intent(conn, caller, args.intent_id)
            body = intent_body(detail)
            body["refunds"] = []
            if detail.payment is not None:
                body["payment"] = payment_body(await read_payment(conn, caller, detail.payment.id))
                refunds = await list_refunds(conn, caller, detail.payment.id)
                body["refunds"] = [refund_body(refund) for refund in refunds]
            return body

    body = run(settings, step)
    if args.json:
        print(json.dumps(body))
        return 0
    _print_intent(body)
    return 0


def _print_intent(body: JsonObject) -> None:
    for key in ("id", "status", "merchant_account_id", "external_reference", "provider", "created_at"):
        print(f"{key}: {_text(body.get(key))}")
    print(f"amount: {body['amount']} {body['currency']}")
    payment = body.get("payment")
    if isinstance(payment, dict):
        print(
            f"payment: {payment['id']} {payment['status']} (authorized {_text(payment.get('authorized_at'))})"
        )
    else:
        print("payment: - (none: the provider has not authorized this intent)")
    refunds = body["refunds"]
    assert isinstance(refunds, list)
    for refund in refunds:
        assert isinstance(refund, dict)
        print(f"refund: {refund['refund_id']} {refund['status']} {refund['amount']} {refund['currency']}")
    timeline = body["timeline"]
    assert isinstance(timeline, list)
    print("timeline:")
    for entry in timeline:
        assert isinstance(entry, dict)
        print(f"  {entry['at']}  {entry['type']}")


def _text(value: object) -> str:
    return "-" if value is None else str(value)


def _webhooks_retry(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.clock import SystemClock
    from payorch.webhooks.schemas import delivery_body
    from payorch.webhooks.service import find_delivery, retry_delivery

    async def step(phases: Phases) -> dict[str, object]:
        async with phases.transaction() as conn:
            found = await find_delivery(conn, args.delivery_id)
            if found is None:
                raise ResourceNotFound(f"No webhook delivery {args.delivery_id}.")
            caller = await operator_caller(conn, found.application_id)
            retried = await retry_delivery(conn, SystemClock(), caller, found.endpoint_id, found.id)
            return delivery_body(retried)

    body = run(settings, step)
    if args.json:
        print(json.dumps(body))
        return 0
    print(
        f"payorch: {body['id']} ({body['event_type']} to {body['endpoint_id']}) is {body['status']},"
        f" next attempt at {_text(body.get('next_attempt_at'))}: a worker sends it"
    )
    return 0
