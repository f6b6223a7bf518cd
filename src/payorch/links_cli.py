"""The operator's `links` commands: create, list, deactivate (docs/payment-links.md).

Each runs payorch.links' service as the operator's command line (admin_cli.operator_caller): the
API's rules apply (PAYORCH_MAX_ACTIVE_PAYMENT_LINKS, an expiry in the future), and each change is
logged in the activity log by "system". The amount is typed as people type it (payorch.amount_text:
`15,000` CLP, `1,234.50` USD). A refusal is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from payorch.admin_cli import command, command_group, json_flag, operator_caller, rfc3339, run
from payorch.clock import SystemClock
from payorch.config import Settings

if TYPE_CHECKING:
    from payorch.db import Phases
    from payorch.links.records import LinkDetail
    from payorch.pagination import Page

STATUSES = ("ACTIVE", "COMPLETED", "EXPIRED", "DEACTIVATED")


def add_links_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = command_group(commands, "links", "make and manage payment links")
    create = command(actions, "create", "create a payment link; prints its URL for the buyer")
    _application(create)
    create.add_argument("--merchant", metavar="ID", required=True, default=argparse.SUPPRESS, help="mrc_...")
    create.add_argument(
        "--amount", required=True, default=argparse.SUPPRESS, help="as people type it: 15,000"
    )
    create.add_argument("--currency", required=True, default=argparse.SUPPRESS, help="ISO 4217: CLP")
    create.add_argument("--description", required=True, default=argparse.SUPPRESS, help="shown to the buyer")
    create.add_argument("--max-payments", type=int, default=1, help="paid intents, then COMPLETED")
    create.add_argument("--expires-at", type=rfc3339, help="RFC 3339 with its zone (unset: never)")
    create.add_argument("--after-payment-url", help="where the buyer goes after paying")
    create.add_argument("--external-reference", help="your own reference")
    json_flag(create)
    create.set_defaults(handler=_create)

    listing = command(actions, "list", "list an application's payment links, newest first")
    _application(listing)
    listing.add_argument("--status", choices=STATUSES, action="append", help="repeat for several")
    json_flag(listing)
    listing.set_defaults(handler=_list)

    deactivate = command(actions, "deactivate", "deactivate a payment link (its page then says so)")
    _application(deactivate)
    deactivate.add_argument("link_id", metavar="LINK_ID", help="plink_...")
    deactivate.add_argument("--message", help="shown to buyers who open the link")
    json_flag(deactivate)
    deactivate.set_defaults(handler=_deactivate)


def _application(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--application-id", metavar="ID", help="app_... (required)", required=True, default=argparse.SUPPRESS
    )


def _print(body: dict[str, object], as_json: bool) -> None:
    if as_json:
        print(json.dumps(body))
        return
    for key in ("id", "status", "url", "payments_count", "buyer_message"):
        if body.get(key) is not None:
            print(f"{key}: {body[key]}")


def _create(settings: Settings, args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from payorch.amount_text import UnreadableAmount, read_amount
    from payorch.errors import ValidationFailed
    from payorch.links import service
    from payorch.links.schemas import CreatePaymentLink, link_body

    try:
        amount = read_amount(args.amount, args.currency)
        fields = {
            "merchant_account_id": args.merchant,
            "amount": amount,
            "currency": args.currency,
            "description": args.description,
            "max_payments": args.max_payments,
            "expires_at": args.expires_at,
            "after_payment_url": args.after_payment_url,
            "external_reference": args.external_reference,
        }
        body = CreatePaymentLink.model_validate({k: v for k, v in fields.items() if v is not None})
    except UnreadableAmount as refused:
        raise ValidationFailed.field("amount", str(refused)) from None
    except ValidationError as refused:
        problem = refused.errors()[0]
        raise ValidationFailed.field(str(problem["loc"][0]), problem["msg"]) from None

    async def step(phases: Phases) -> LinkDetail:
        async with phases.transaction() as conn:
            caller = await operator_caller(conn, args.application_id)
            limit = settings.max_active_payment_links
            return await service.create_link(conn, SystemClock(), caller, body, limit=limit)

    _print(link_body(run(settings, step), settings.public_url), args.json)
    return 0


def _list(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.links import service
    from payorch.links.schemas import LinkListQuery, link_body

    async def step(phases: Phases) -> Page[LinkDetail]:
        async with phases.reading() as conn:
            caller = await operator_caller(conn, args.application_id)
            query = LinkListQuery.model_validate({"limit": 100, "status": args.status or None})
            return await service.list_links(conn, SystemClock(), caller, query)

    items = [link_body(item, settings.public_url) for item in run(settings, step).items]
    if args.json:
        print(json.dumps({"items": items}))
        return 0
    for item in items:
        paid = f"{item['payments_count']}/{item['max_payments']}"
        amount = f"{item['amount']} {item['currency']}"
        print(f"{item['id']}  {item['status']:<11}  {paid:>7}  {amount}  {item['url']}")
    return 0


def _deactivate(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.links import service
    from payorch.links.schemas import DeactivatePaymentLink, link_body

    body = DeactivatePaymentLink.model_validate({"message": args.message} if args.message else {})

    async def step(phases: Phases) -> LinkDetail:
        async with phases.transaction() as conn:
            caller = await operator_caller(conn, args.application_id)
            return await service.deactivate_link(conn, SystemClock(), caller, args.link_id, body)

    _print(link_body(run(settings, step), settings.public_url), args.json)
    return 0
