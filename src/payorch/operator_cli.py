"""The operator's look-ups and repairs by id: `payments show <intent id>` (or by the shop's
external reference) and `webhooks retry <delivery id>`, plus `payments capture|void` (holds_cli.py)
and the `connectors` commands (connectors_cli.py); payment_text.py writes what `payments show`
prints.

An id names its application: the command reads the record by id alone, then calls the same
service functions as the API with that application as the caller (admin_cli.operator_caller),
so the API's rules and refusals apply (a succeeded delivery: one line, exit status 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from payorch.admin_cli import command, command_group, json_flag, operator_caller, run
from payorch.config import Settings
from payorch.connectors_cli import add_connector_commands
from payorch.errors import ResourceNotFound
from payorch.holds_cli import add_hold_commands
from payorch.jsontypes import JsonObject
from payorch.payment_text import intent_lines, match_line

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from payorch.auth.service import Caller
    from payorch.db import Phases

MATCHES = 20  # intents listed for an external reference that several share


def add_operator_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    payment_actions = command_group(commands, "payments", "look up payments, capture or void holds")
    show = command(
        payment_actions,
        "show",
        "show a payment intent with its payment, refunds and timeline",
        description=(
            "Show a payment intent: where it stands (why it failed, what a PROCESSING one waits"
            " for), where it was routed and why, its payment, refunds and timeline; amounts as"
            " people read them (--json: the API's body). Give its id, or --external-reference"
            " (several intents with it are listed, newest first)."
        ),
    )
    show.add_argument(
        "intent_id", nargs="?", metavar="INTENT_ID", help="payi_... (the API's payment intent id)"
    )
    show.add_argument("--external-reference", metavar="REF", help="the shop's reference instead of the id")
    show.add_argument("--merchant", metavar="mrc_...", help="with --external-reference: this merchant's only")
    json_flag(show)
    show.set_defaults(handler=_payments_show)
    add_hold_commands(payment_actions)

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
    from payorch.intents.service import find_intent

    if (args.intent_id is None) == (args.external_reference is None):
        print("payorch: give an INTENT_ID or --external-reference REF (one of them)", file=sys.stderr)
        return 2
    if args.merchant is not None and args.external_reference is None:
        print("payorch: --merchant narrows --external-reference; an id needs none", file=sys.stderr)
        return 2

    async def step(phases: Phases) -> JsonObject:
        async with phases.reading() as conn:
            if args.intent_id is None:
                return await _by_reference(conn, args.external_reference, args.merchant)
            found = await find_intent(conn, args.intent_id)
            if found is None:
                raise ResourceNotFound(f"No payment intent {args.intent_id}.")
            return await _shown(conn, await operator_caller(conn, found.application_id), found.id)

    body = run(settings, step)
    if args.json:
        print(json.dumps(body))
        return 0
    if "items" in body:  # several intents share the reference
        items = body["items"]
        assert isinstance(items, list)
        print(
            f"payorch: {len(items)} payment intents have external reference {args.external_reference}"
            f" (newest first{', the first ' + str(MATCHES) if len(items) == MATCHES else ''});"
            " show one by its id:"
        )
        for item in items:
            assert isinstance(item, dict)
            print(match_line(item))
        return 0
    print("\n".join(intent_lines(body)))
    return 0


async def _shown(conn: AsyncConnection, caller: Caller, intent_id: str) -> JsonObject:
    """The API's intent body with its payment (refunded amount) and refunds."""
    from payorch.intents.schemas import intent_body
    from payorch.intents.service import read_intent
    from payorch.payments.refunds import list_refunds
    from payorch.payments.schemas import payment_body, refund_body
    from payorch.payments.service import read_payment

    detail = await read_intent(conn, caller, intent_id)
    body = intent_body(detail)
    body["refunds"] = []
    if detail.payment is not None:
        body["payment"] = payment_body(await read_payment(conn, caller, detail.payment.id))
        refunds = await list_refunds(conn, caller, detail.payment.id)
        body["refunds"] = [refund_body(refund) for refund in refunds]
    return body


async def _by_reference(conn: AsyncConnection, reference: str, merchant: str | None) -> JsonObject:
    """The one intent with the shop's ``reference`` (shown), or several: ``{"items": [...]}``,
    newest first. Each application is asked as the API's list is, by its (application,
    external reference) index: an installation has few applications."""
    from pydantic import ValidationError

    from payorch.applications.service import list_applications
    from payorch.intents.listing import list_intents
    from payorch.intents.schemas import IntentListQuery, intent_summary_body

    where = f" at merchant {merchant}" if merchant else ""
    try:
        query = IntentListQuery(external_reference=reference, merchant_account_id=merchant, limit=MATCHES)
    except ValidationError:  # longer than any reference can be
        raise ResourceNotFound(f"No payment intent has external reference {reference}{where}.") from None
    applications = await list_applications(conn)
    if merchant is not None:
        applications = [a for a in applications if merchant in a.merchant_account_ids]
        if not applications:
            raise ResourceNotFound(f"No merchant account {merchant}.")
    found: list[tuple[Caller, JsonObject]] = []
    for summary in applications:
        caller = await operator_caller(conn, summary.application.id)
        page = await list_intents(conn, caller, query)
        found += [(caller, intent_summary_body(intent)) for intent in page.items]
    if not found:
        raise ResourceNotFound(f"No payment intent has external reference {reference}{where}.")
    if len(found) == 1:
        caller, only = found[0]
        return await _shown(conn, caller, str(only["id"]))
    items = sorted((body for _, body in found), key=lambda body: str(body["id"]), reverse=True)
    return {"items": list(items[:MATCHES])}


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
